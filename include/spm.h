/*
 * spm.h -- the one public header of spm, emulated secure persistent memory.
 *
 * spm turns a file into a persistent heap whose every 64-byte line is
 * encrypted with counter-mode AES by an emulated memory controller (counter
 * cache, ADR-protected write queues), and that recovers consistently when the
 * process is killed at any instruction.  Each design of the papers the project
 * implements is a preset of that controller, chosen at pool creation.
 *
 * This header is the manual.  Conventions:
 *
 *  - Errors are negative int codes: SPM_E_* below, or -errno for system errors
 *    (-ENOENT, -EEXIST, -ENOMEM, ...).  spm_strerror() names every code;
 *    spm_errormsg() gives the calling thread's last message, naming the file
 *    or option at fault, and spm_errcode() the code that came with it: the
 *    way to tell why a function that returns NULL or 0 (spm_root,
 *    spm_tx_alloc) or nothing (spm_flush, spm_tx_abort, ...) failed.
 *
 *  - Options: one string "key=value;key=value", the same syntax as the
 *    environment variable SPM_CONF, which is read by spm_create() and
 *    spm_open(); keys given explicitly in the options argument win over
 *    SPM_CONF, and a key given twice in one string takes its last value.  An
 *    unknown key or a bad value is an error (SPM_E_OPTION), never silently
 *    ignored.  Keys (defaults in brackets):
 *      design=NAME        plain|ideal|unsafe|colocated|colocated-cc|fca|sca
 *                         |wt|wt-cwc|wt-xbank|supermem|srl|lame|clame
 *                         |bmt-nocc|sc|osiris|ccnvm-nods|ccnvm|dewrite
 *                         |dewrite-direct|dewrite-parallel [sca]
 *                         fixed at spm_create(); at spm_open() it may be given
 *                         only with the pool's own design.  The SuperMem
 *                         designs (wt...) write every counter through with its
 *                         data and keep split counters (a major per 4 KiB page,
 *                         7-bit minors): programs need no CounterAtomic.
 *                         The redo designs (srl, lame, clame) log transactions
 *                         in the memory controller: spm_tx_add declares the
 *                         lines a transaction writes (no undo log is written),
 *                         spm_tx_commit hands them to the controller, which
 *                         writes encrypted redo log records and a commit
 *                         record and copies them home later; their lines are
 *                         not written back before the commit.
 *                         The integrity designs (bmt-nocc, sc, osiris,
 *                         ccnvm-nods, ccnvm) add a MAC to every line and a
 *                         Merkle tree over the counters, verified at open
 *                         (below, "Integrity"); bmt-nocc has no crash
 *                         consistency (a crash leaves it refused).
 *                         The dedup designs (dewrite...) do not write a
 *                         line whose content is already in the media: the
 *                         line is mapped to its twin (DeWrite); its pad
 *                         comes from its address and its hash, not a
 *                         counter.  spm_rekey refuses their pools.
 *      layout=NAME        the program's name for its pools, 1-63 bytes, no
 *                         ';' [none]: stored at spm_create(); at spm_open()
 *                         a pool created with another layout (or none) is
 *                         refused with SPM_E_LAYOUT before any file is
 *                         written; an open without layout= accepts any pool
 *      profile=NAME       timing/configuration profile: sca (the counter-
 *                         atomicity paper's Table 2) | supermem (SuperMem's
 *                         Table 2: one shared 32-entry queue, 256 KiB 8-way
 *                         counter cache, banks of whole 4 KiB pages) | redo
 *                         (the redo-logging paper's Table I: 2 GHz, 32-entry
 *                         shared queue, 512 KiB counter cache, 32 banks, a
 *                         16-stage AES pipeline) | ccnvm (cc-NVM's section
 *                         5: 3 GHz, 256 KiB L2, a 128 KiB counter and tree
 *                         cache, PCM 60 / 150 ns, a 64-entry write queue,
 *                         72 ns AES, 80-cycle HMAC) | dewrite (DeWrite's
 *                         15 ns CRC-32, 75 ns line read and 1-cycle
 *                         compare, SCA's Table 2 otherwise) | heap (spm as
 *                         an encrypted persistent heap, not a study:
 *                         timing=off, a channel per online CPU where the
 *                         design allows, alloc=lanes; the design's own
 *                         profile sizes queues and counter cache)
 *                         [sca; supermem for the SuperMem designs, redo for
 *                         srl, lame, clame, ccnvm for the integrity designs,
 *                         dewrite for the dedup designs]
 *      channels=N         memory channels, 1-16: pages interleaved across N
 *                         controllers, each with its own lock, write queues,
 *                         counter cache slice and AES context; a fence waits
 *                         for the channels its thread wrote.  More than one
 *                         needs timing=off or core_model=off, and a design
 *                         without a redo log, integrity tree or dedup tables
 *                         (SPM_E_OPTION otherwise) [1; profile=heap: online
 *                         CPUs, at most 16, where the design allows]
 *      alloc=lanes|shared lanes: each transaction lane allocates from its
 *                         own cursor in arenas of the heap it holds; shared:
 *                         one next-fit cursor [shared; profile=heap: lanes]
 *      log_kib=N          the redo designs' log area in KiB, fixed at
 *                         spm_create(); a transaction must fit it (else
 *                         SPM_E_NOSPACE at commit); clame at most 4608 (its
 *                         18-bit partial counters) [1024]
 *      bmt_n=N            the integrity designs' update limit (cc-NVM's
 *                         N): a counter line is persisted (osiris) or the
 *                         epoch drained (ccnvm...) after N updates; recovery
 *                         tries at most N counters a line; fixed at
 *                         spm_create(), 1..4096 [16]
 *      bmt_m=N            ccnvm-nods/ccnvm: dirty address queue entries
 *                         (M), 4..256 and at least one write-back's
 *                         metadata lines (the tree's height + 1, 8 at 8
 *                         MiB), fixed at spm_create() [64]
 *      dedup_line=64|256  the dedup designs' unit: a write-back writes (or
 *                         cancels) its whole unit; fixed at spm_create()
 *                         [256, DeWrite's line]
 *      dewrite_pad=crc|version  their pads' input besides the address: the
 *                         unit's CRC-32 (DeWrite's scheme: two contents
 *                         with one CRC at one address share a pad) or the
 *                         CRC and a version raised at every write (no pad
 *                         is used twice); fixed at spm_create() [version]
 *      dedup_window=N     the predictor's history window, the last N
 *                         writes' outcomes, 1..63 [3]
 *      key_file=PATH      the key file [<path>.key]: the AES key and each
 *                         pool's generation (below, "Key files").
 *                         spm_create() makes a new one (mode 0600, O_EXCL)
 *                         where no file is; an existing key file is used only
 *                         when key_file= names it
 *      aes_bits=128|256   key size, fixed at spm_create() [128]
 *      ctr_cache_kib=N    counter cache size in KiB [profile: 1024]
 *      ctr_cache_ways=N   counter cache associativity [profile: 16]
 *      wpq_data=N         data write queue entries [profile: 64]
 *      wpq_ctr=N          counter write queue entries [profile: 16]
 *      banks=N            memory banks of the timing model [profile: 8]
 *      bank_lines=N       consecutive 64-byte lines per bank, <= 2^24 [profile: 1 or 2^24]
 *      bank_hash=0|1      XOR-fold the address bits above the bank index into
 *                         it (permutation interleaving; power-of-two banks
 *                         only: bank_hash=1 with other counts is an error,
 *                         the profile's default just does not apply)
 *                         [profile: sca 1, supermem 0]
 *      core_banks=0|1     each modeled core a program with its own memory:
 *                         core i's bank b is bank (b + i) mod banks [0]
 *      timing=on|off      off: no memory model -- every request is served at
 *                         once, modeled time is only spm_model_work's; the
 *                         same media writes (nothing waits, so nothing
 *                         coalesces), ~20 % less CPU per operation [on]
 *      core_model=on|off  the core model (README "The core model"): an
 *                         instrumented program's loads and stores go through
 *                         modeled caches, LLC misses are memory reads, dirty
 *                         LLC evictions write-backs; off (or timing=off):
 *                         write-backs and fences only [on]
 *      cores=N            the modeled machine's cores, 1..64: the shared LLC
 *                         and counter cache are sized per core where the
 *                         profile says so (sca: 2 MB and 1 MB per core; the
 *                         counter cache at most 8 MB) [1]
 *      l1_kib, l2_kib, llc_kib  cache sizes in KiB (llc_kib: the whole
 *                         LLC) [profile]
 *      access_ns=NS       issue cost of one load or store [profile: sca
 *                         0.75, supermem 1.5]
 *      prefault=0|1       1: every page of the pool's files and of its view
 *                         is mapped at create and open (as PMDK's
 *                         prefault.at_create/at_open): first touches cost
 *                         there, not in the first transactions; costs the
 *                         pool's size in memory at once [0]
 *      tx_track=off|pages pages: transactions find their own writes, and
 *                         spm_tx_add becomes optional [off].  Given at
 *                         spm_create or spm_open (not stored in the pool;
 *                         a pool may be opened with or without it).  The
 *                         pool's heap (the objects of spm_tx_alloc and
 *                         spm_root) is kept read-only but for the pages
 *                         written since the last spm_tx_begin, which
 *                         protects those again; in a transaction the first
 *                         store to a page faults, a SIGSEGV handler copies
 *                         the page and makes it writable; at commit the
 *                         lines that differ from the copies are logged (or,
 *                         in the redo designs, declared to the controller)
 *                         and persisted exactly as if spm_tx_add had been
 *                         called on them, and spm_tx_abort copies the pages
 *                         back.  Explicit spm_tx_add still works beside it
 *                         (a line is logged once).  Until the commit has
 *                         logged them, the lines of the pages written are
 *                         not written back by a natural eviction, and
 *                         spm_flush/spm_persist of them in the transaction
 *                         logs them first.  Stores outside any transaction
 *                         are not tracked: as without the option, they are
 *                         durable only through spm_persist (their first
 *                         store to a page since the last spm_tx_begin costs
 *                         a fault).  Threads: the tracked transactions of a
 *                         pool run one at a time -- spm_tx_begin waits for
 *                         another thread's to end -- and while one is open,
 *                         every store to the heap, by any thread, is its
 *                         own: committed with it or undone by its abort; an
 *                         spm_flush by another thread of a line of a page
 *                         it wrote waits for its end.  Stores of other
 *                         threads during it must be ordered with its
 *                         commit like any shared memory (a lock).  The
 *                         handler is installed at each tracked open (unless
 *                         it is in place) and passes every other fault to
 *                         the handler installed before it (or the default
 *                         action); a program that installs its own SIGSEGV
 *                         handler after opening must pass faults it does
 *                         not own on likewise.  Costs about 10 us of wall
 *                         time per page a transaction writes (doc/
 *                         results.md); memory: an anonymous reservation of
 *                         the heap's size for page copies, of which the
 *                         pages a transaction writes are used (the first 64
 *                         kept, the rest given back at its end), and 12
 *                         bytes per heap page.  Needs 4 KiB pages
 *                         (SPM_E_OPTION otherwise).  Limits: the kernel
 *                         takes no fault for its own writes, so a system
 *                         call that writes into a heap page not stored to
 *                         since the last spm_tx_begin (read(2) into an
 *                         object) fails with EFAULT -- store to the page
 *                         first; each page written splits the view's
 *                         mapping, and vm.max_map_count (65530) bounds the
 *                         pages written between two spm_tx_begin calls to
 *                         about 32000 (beyond, the process aborts); the
 *                         program must not mprotect the heap itself; a
 *                         transaction's changes must fit its lane's log,
 *                         which is known only at spm_tx_commit (it then
 *                         aborts with SPM_E_NOSPACE); spm_tx_begin waiting
 *                         for another thread's transaction can deadlock
 *                         with a lock that thread waits for; close a pool
 *                         only when no thread waits in it
 *      wpq_issue=inorder|bankfree  a core's queued writes reach their banks
 *                         in queue order, or each as soon as its bank is
 *                         free [profile: sca bankfree, supermem inorder]
 *      wpq_window=N       with wpq_issue=inorder: a core's write reaches its
 *                         bank no earlier than its write N before it in
 *                         queue order did; 1 is strict order, the queue's
 *                         length (one core, FIFO entries) is as bankfree;
 *                         1..64 [1]
 *      wpq_order=fifo|any a write takes the queue entry of the write a queue
 *                         length before it (fifo), or any entry whose write
 *                         has completed (any) [fifo]
 *      ctr_placement=P    interleave|single|same|xbank: the bank of a counter
 *                         line -- in a counter area at a fixed address above
 *                         any pool, interleaved like the data; all in the one
 *                         bank where that area begins; the bank X of its
 *                         data; bank (X + banks/2) mod banks (SuperMem 3.3)
 *                         [design].  No bank depends on the pool's size
 *      minor_bits=N       split counters: bits per minor counter, 1-7, fixed
 *                         at spm_create() [7]; fewer bits overflow minors (and
 *                         re-encrypt pages) more often, for tests
 *      durability=MODE    auto|pmem|msync|none [auto]: how writes to the
 *                         media files are made durable.  auto: pmem flushes
 *                         where libpmem reports real persistent memory
 *                         (power-fail durable), plain stores elsewhere (durable
 *                         against a process crash, the crash model of spm).
 *                         msync: msync every media write (power-fail durable on
 *                         any file system, slow).
 *      ctr_recovery=MODE  advance|none [advance]: after a crash, re-encrypt
 *                         the lines whose cached counters may have been lost
 *                         under counters past every value that could have
 *                         been used, so no pad is ever reused (sca, unsafe).
 *                         none exists only to show the auditor finds reuse:
 *                         a test knob (below).
 *
 *      redo_early_apply=1 a test knob: the redo designs apply a
 *                         transaction's records in place before its commit
 *                         record, as a broken controller would (the crash
 *                         tests' negative control) [0]
 *      dedup_early_map=1  a test knob: the dedup designs map a line to its
 *                         new unit before its data is in the write queue
 *                         (the crash tests' negative control) [0]
 *
 *    Test knobs: ctr_recovery=none, redo_early_apply=1, dedup_early_map=1, and the test injectors SPM_AUDIT (a
 *    checksum of every plaintext line written to a file) and SPM_POWERFAIL
 *    (written lines put back at a kill or close), harm a normal run; each is
 *    refused (SPM_E_OPTION), from SPM_CONF, the options argument or the
 *    environment alike, unless SPM_TEST_KNOBS=1 is in the environment.
 *    SPM_CRASH (a kill at a named crash point: point:NAME must name one, or
 *    SPM_E_OPTION lists them) and SPM_EVICT (early write-backs) need no
 *    switch: a kill and an eviction are what spm is built to survive.
 *      t_rcd, t_cl, t_cwd, t_faw, t_wtr, t_wr, aes_ns  timing parameters in
 *                         nanoseconds (decimals allowed) [profile]
 *      bus_mhz=F          the data bus clock in MHz (a DDR bus: a 64-byte
 *                         line, 72 where counters travel with the data, in
 *                         8 beats, 4 cycles); 0 is the profile's [533]
 *
 *  - Threads: a pool may be used by several threads at once.  spm_create,
 *    spm_open and spm_close must not race with any other call on the same
 *    pool.  Every other function is thread-safe.  A thread has at most one
 *    open transaction per pool; the transaction belongs to the thread that
 *    began it.  Stores to the view are ordinary memory stores: two threads
 *    writing the same bytes must synchronise as with any shared memory.
 *    With tx_track=pages (above) a pool's transactions run one at a time
 *    and own every store to its heap made while they are open.
 *    Every thread's write-backs, fences and commits go through the pool's
 *    controller -- with channels=N (profile=heap), through the controllers of
 *    the channels of the pages they write, each one thread at a time; what
 *    threads gain is measured in doc/results.md ("Real threads").  A thread that exits
 *    (returns from its start routine or calls pthread_exit) with a
 *    transaction open has it aborted at its exit and its lane freed, in each
 *    pool still open; exit() or a crash of the process leaves it to the next
 *    open's recovery, as always.
 *
 *  - fork(): a pool belongs to the process that created or opened it.  In a
 *    child of fork() every call on an inherited pool fails with SPM_E_INVAL
 *    ("pool used after fork") and writes nothing: functions that return
 *    nothing only set the message and code (spm_errormsg, spm_errcode), and
 *    spm_ptr, spm_off, spm_size and spm_design, which only read the handle,
 *    return NULL or 0.  The child's spm_close(), optional,
 *    frees the child's copy of the handle and returns SPM_E_INVAL; it does
 *    not drain, write counters back, mark the pool clean or unlock it, so the
 *    parent's pool stays open and a crash of the parent is recovered.  The
 *    child keeps descriptors of the pool's locks (closed at exec, at its
 *    exit or by that spm_close): until then the pool cannot be opened again
 *    even after the parent closed it (SPM_E_BUSY).  A child may create and
 *    open pools of its own, not the parent's while it is open.
 *
 *  - Persistence: the pool is a plaintext view in process memory (the CPU
 *    cache domain).  Nothing is durable until it is written back with
 *    spm_flush() and fenced with spm_drain() (or spm_persist(), or a
 *    transaction commit).  A write-back reaches the controller, which encrypts
 *    it and places it in the ADR-protected write queue; from then on it is
 *    durable.  A process killed at any point loses exactly what a power
 *    failure of the emulated machine would lose.
 *
 *  - Designs differ only in how counters are kept crash consistent.  The same
 *    program runs on each.  spm_counter_atomic() and
 *    spm_counter_cache_writeback() are honoured by sca (selective counter-
 *    atomicity) and are harmless elsewhere.  Transactions follow the undo-log
 *    of the counter-atomicity paper's Figure 9 on every design.
 */
#ifndef SPM_H
#define SPM_H 1

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SPM_BUILDING_LIBRARY) && defined(__GNUC__)
#define SPM_API __attribute__((visibility("default")))
#else
#define SPM_API
#endif

#define SPM_VERSION_MAJOR 0
#define SPM_VERSION_MINOR 1
#define SPM_VERSION_PATCH 0

/* Size of a line: the unit of write-back, encryption and counters. */
#define SPM_LINE 64

/* Error codes of spm itself; system errors are returned as -errno. */
enum spm_error {
	SPM_E_BASE = -2000,
	SPM_E_NOTPOOL = -2000,   /* the file is not an spm pool (bad magic) */
	SPM_E_TRUNCATED = -2001, /* a pool file is shorter or longer than its geometry */
	SPM_E_CORRUPT = -2002,   /* a superblock or header checksum does not match */
	SPM_E_MISMATCH = -2003,  /* data and meta files belong to different pools, or
	                            to different states of one (an older copy) */
	SPM_E_VERSION = -2004,   /* a format version this spm does not read */
	SPM_E_KEY = -2005,       /* the key does not match the pool's key check value */
	SPM_E_KEYFILE = -2006,   /* the key file is missing, unreadable or malformed */
	SPM_E_DESIGN = -2007,    /* unknown design name */
	SPM_E_OPTION = -2008,    /* unknown option key or bad option value */
	SPM_E_NOSPACE = -2009,   /* no free run of that size in the heap, or the log is full */
	SPM_E_INVAL = -2010,     /* an argument is invalid (bad offset, size, state) */
	SPM_E_BUSY = -2011,      /* the pool is already open, or no lane is free */
	SPM_E_TXSTATE = -2012,   /* no transaction / already in a transaction */
	SPM_E_CRYPTO = -2013,    /* the crypto library failed */
	SPM_E_ROLLBACK = -2014,  /* the pool files are older than the key file's record
	                            of the pool (a restored copy: a rollback) */
	SPM_E_LAYOUT = -2015,    /* the pool was created with another layout name */
	SPM_E_WRONGDESIGN = -2016, /* a known design, but not the one the pool was
	                              created with */
	SPM_E_TAMPERED = -2017,  /* integrity designs: a line, MAC, counter or tree
	                            node was changed outside spm (spm_verify lists them) */
	SPM_E_LAST = -2017
};

typedef struct spm_pool spm_pool;

/* A persistent pointer: a byte offset into the pool; 0 is null. */
typedef uint64_t spm_off_t;

/*
 * spm_create -- create a new pool of size bytes at path (files path and
 * path.meta, and path.key unless key_file names an existing key).  size is
 * rounded up to 4 KiB; the minimum is 4 MiB (SPM_E_INVAL below).  Fails with
 * -EEXIST if path or path.meta exists, SPM_E_KEYFILE if path.key exists and
 * key_file= does not name it (a key file spm did not make is never adopted
 * unnamed), -ENAMETOOLONG if the last component of path is longer than 238
 * bytes (spm adds ".key.new.XXXXXXXX").  Both files get all their blocks now
 * (posix_fallocate, as libpmemobj does): on a file system without room,
 * -ENOSPC and no file is left, where a sparse pool would die of SIGBUS at
 * some later store.  In an encrypting design every line of the data file is
 * ciphertext from here on (the encryption of zeros under counter 0), so the
 * file does not show which lines a program has used; this costs about 0.3 s
 * per GiB.  Atomic: the files are made under temporary names and put in
 * place at the end; a process killed inside spm_create leaves either no
 * pool (the next spm_create of the path clears what it left) or a complete
 * one.  On success *pool is an open pool.
 */
SPM_API int spm_create(spm_pool **pool, const char *path, size_t size,
		       const char *options);

/*
 * spm_open -- open an existing pool.  If the pool was not closed cleanly the
 * controller first drains the ready entries of its ADR write queues and drops
 * the rest, then interrupted transactions are rolled back and the allocator
 * repaired.  Bad input (not a pool, truncated, corrupt, another pool's meta
 * file, a newer version, the wrong key, a bad option) is refused with its own
 * error code before any file is modified.  Damage inside the encrypted
 * content of a dirty pool (e.g. a forged write queue entry) shows only after
 * the controller has drained its queues; such a pool is refused
 * (SPM_E_CORRUPT) and left dirty, never marked clean.  A pool whose files
 * have holes (copied sparse) gets their blocks first; without room, -ENOSPC
 * and the files are as they were.  Pool files older than the key file's
 * record of the pool are refused with SPM_E_ROLLBACK (below, "Key files").
 * The data and meta files are both locked (flock) while open: a second
 * opener of either, under any name (a hard link), gets SPM_E_BUSY.
 *
 * Key files.  The key file is the processor's secret state: it must be a
 * regular file owned by the calling user with no group or other permission
 * bits; it is opened without following symbolic links; anything else is
 * SPM_E_KEYFILE, before any file is touched.  Besides the key it holds, for
 * every pool that uses it, the pool's generation, raised at every open and
 * close (written crash-safely: a temporary file, fsync, rename), so its
 * directory must be writable.  The pool files carry epoch words that must
 * reach that generation, each with a MAC under a key derived from the pool's
 * key.  Restoring an older copy of the pool files (a backup, or an attacker
 * with write access to them) is therefore refused: every write after it
 * would re-encrypt lines under (line, counter) pairs already used.  To use a
 * backup on purpose, re-key it (spm_rekey, below; the command spm-rekey),
 * or restore the key file saved with it as well.  What this does not
 * detect: the current epoch words copied into an old copy, or
 * single lines replayed with their counters, the replay attacks integrity
 * protection exists for (not in these designs); and a copy taken while the
 * pool was open, put back after that run crashed.
 */
SPM_API int spm_open(spm_pool **pool, const char *path, const char *options);

/*
 * spm_rekey -- make a restored copy of a pool safe to use: the clean pool at
 * path (a backup taken while it was closed, refused by spm_open with
 * SPM_E_ROLLBACK once the pool has been used since) gets a new identity,
 * hence a new encryption key derived from its key file's key, and every
 * line of its data file is re-encrypted under it: no pad of the new key was
 * ever used, so writing to it reuses none.  The key file's record of the old
 * identity stays, and keeps refusing every other copy.  Options: key_file=
 * (others are accepted and ignored).  Crash-safe: the new files are written
 * beside the pool's and renamed over them, the data file last; a process
 * killed before that leaves the pool as it was, one killed between the two
 * renames leaves a pool spm_open refuses (SPM_E_MISMATCH, saying so) until
 * spm_rekey is run again, which finishes it.  SPM_E_INVAL for a plain pool
 * or one not closed cleanly (its recovery would encrypt under the old key);
 * the errors of spm_open for bad files and keys.  Takes the pool's size of
 * free space while it runs; about as long as spm_create of that size.
 */
SPM_API int spm_rekey(const char *path, const char *options);

/*
 * spm_rekey_key -- re-encrypt every line of the clean pool at path under a
 * NEW random AES key (and a new identity), which replaces the key in its
 * key file: copies of the pool files, and copies of the old key file, no
 * longer open it.  The key file must record no other pool (another pool
 * may use that key): SPM_E_INVAL otherwise, as for a plain pool, an
 * integrity or deduplicating design, or a pool not closed cleanly.
 * Options: key_file= (others are accepted and ignored).  Crash-safe: the
 * new data and meta files and the new key ("<key>.new.<id>") are written
 * and synced, then renamed over the meta file, the data file and last the
 * key file; a process killed before the first rename leaves the pool under
 * its old key (the next spm_rekey_key clears what it left), one killed
 * after it leaves a pool that the next spm_open (or spm_rekey_key)
 * finishes, putting the data file and the new key in place: the pool opens
 * under the old key or the new one, never neither.  Takes the pool's size
 * of free space while it runs.  The command: spm-pool rekey.
 */
SPM_API int spm_rekey_key(const char *path, const char *options);

/*
 * Integrity (designs bmt-nocc, sc, osiris, ccnvm-nods, ccnvm; cc-NVM, DAC
 * 2019): every line has a MAC over (ciphertext, counter, address), and a
 * Merkle tree of MACs covers the counters; its root and the registers of
 * cc-NVM (ROOT_old, ROOT_new, N_wb) are in "<key file>.tcb", beside the key
 * and never in the pool's files.  spm_open verifies every line and node
 * (and after a crash recovers stale counters by MAC trial, cc-NVM 4.4); a
 * change made outside spm is refused with SPM_E_TAMPERED, spm_errormsg()
 * naming the first item and its kind.  What each design detects:
 *
 *   attack (on the files of a      other designs  bmt-nocc   sc, ccnvm-nods  osiris     ccnvm
 *   cleanly closed pool)
 *   a data line or its MAC         no             located    located         located    located
 *   changed (spoof), two lines
 *   swapped with MACs (splice)
 *   a counter line or tree node    no             located    located         located    located
 *   changed
 *   one line replayed with its     no             located    located         located    located
 *   MAC and counter (and nodes)
 *   both files rolled back         refused        detected   detected        detected   detected
 *                                  (SPM_E_ROLLBACK) if older than the key's record; with
 *                                  the current epoch words copied in, only the integrity
 *                                  designs see it (the root)
 *   after a crash: the above       --             no (false  as above; a     see *      as above; a
 *                                                 alarms:    replay of a                replay of a
 *                                                 no crash   line written               line written
 *                                                 consistency) since the last           since the last
 *                                                            drain (ccnvm-nods):        drain: detected,
 *                                                            detected, not located      not located
 *   a crashed pool's state word    --             detected   detected        detected   detected
 *   set to "clean", the drain      (the registers in <key>.tcb say otherwise; they are not in
 *   register set, the design       the pool's files)
 *   renamed to one without MACs
 *   * osiris after a crash rebuilds its tree from the counters: a node in
 *     the files is not read (a changed one is harmless, not reported); a
 *     counter is found again by MAC trial (one lowered is repaired, one no
 *     trial reaches fails its line's MAC: located as that line); a replay
 *     of a line with its counter is detected by the root, not located.
 *   Not detected: the ADR region (the memory controller's queues, on-chip
 *   in the paper) is emulated in <path>.meta; after a crash exactly between
 *   a write-back's queue entry becoming valid and the register store that
 *   follows it, an attacker who removes that entry and lists it as dropped
 *   undoes that one write-back unseen.
 *
 * spm_verify -- check the pool at path as spm_open does (a dirty pool is
 * recovered first, as spm_open recovers it) and list what was tampered with:
 * up to max items into out, their number into *found.  0 when nothing was,
 * SPM_E_TAMPERED when something was, or spm_open's errors (SPM_E_INVAL: not
 * an integrity design).  It never writes to a cleanly closed pool.
 */
enum spm_tamper_kind {
	SPM_TAMPER_DATA = 1, /* a data line or its MAC (spoofing or splicing):
				offset is the line's in the pool */
	SPM_TAMPER_COUNTER,  /* a counter line does not match its tree node (replayed
				or spoofed): offset is the first line it counts */
	SPM_TAMPER_NODE,     /* a tree node does not match its parent: offset is the
				node's in <path>.meta */
	SPM_TAMPER_ROOT,     /* the tree does not match the root register: both files
				rolled back, or the register file replaced */
	SPM_TAMPER_REPLAY,   /* after a crash: a replay detected, not located (cc-NVM
				4.4: N_retry != N_wb, or the rebuilt root differs) */
};
struct spm_tamper {
	int kind;        /* enum spm_tamper_kind */
	uint64_t offset;
};
SPM_API int spm_verify(const char *path, const char *options, struct spm_tamper *out,
		       size_t max, size_t *found);

/*
 * spm_info -- what the files of the pool at path say about it, read without
 * writing a byte to any file (a dirty pool is reported dirty, not
 * recovered): the superblock's geometry, the clean/dirty word, the epoch
 * and, where the key opens it, the root object's size and the heap's usage.
 * Options as spm_open's (key_file=; design= and layout= are checked as
 * there).  The heap fields are filled (heap_known 1) only for a pool closed
 * cleanly, decrypted as spm_open would read it; for a dirty one they are 0
 * (heap_known 0): what recovery would leave is known only after it ran (the
 * command spm-pool runs it on a copy).  0, or the errors of spm_open for bad
 * files, keys and options (SPM_E_NOTPOOL, SPM_E_TRUNCATED, SPM_E_CORRUPT,
 * SPM_E_KEY, SPM_E_TAMPERED, ...), with nothing written.
 */
struct spm_info {
	char design[33];        /* design name */
	char layout[65];        /* layout name given at create ("" = none) */
	uint8_t uuid[16];       /* the pool's identity */
	uint64_t pool_size;     /* bytes of the data file (the pool) */
	uint64_t lines;         /* 64-byte lines */
	uint64_t meta_size;     /* bytes of <path>.meta */
	unsigned aes_bits;      /* 128 or 256; 0 for plain */
	unsigned split_counters; /* 1: a major per 4 KiB page and minors; 0: a
				    64-bit counter per line */
	unsigned minor_bits;    /* split counters: bits of a minor */
	unsigned wpq_data_cap;  /* ADR region capacity: data queue entries */
	unsigned wpq_ctr_cap;   /* counter queue entries */
	uint64_t log_bytes;     /* redo designs: the log area (0: none) */
	uint64_t mac_bytes, tree_bytes, dedup_bytes; /* integrity, dedup areas */
	unsigned bmt_n, bmt_m;  /* integrity designs' N and M (0: none) */
	int dirty;              /* 1: not closed cleanly (recovery pending) */
	uint64_t epoch;         /* the files' epoch (generation), data file's word */
	int heap_known;         /* 1: the fields below were read (a clean pool) */
	uint64_t root_size;     /* bytes of the root object (0: none yet) */
	uint64_t heap_bytes;    /* bytes of the heap */
	uint64_t heap_used;     /* bytes allocated: the heap's 64-byte units
				   in use, the root object's included */
	uint64_t heap_objects;  /* objects allocated */
};
SPM_API int spm_info(const char *path, const char *options, struct spm_info *out);

/*
 * spm_close -- drain the write queues, write back the counter cache, mark the
 * pool clean, unmap and free.  Open transactions of the pool are aborted.
 * Returns 0 or a negative error (the pool is freed in any case).  In a child
 * of fork(): frees the child's copy only, SPM_E_INVAL (see fork() above).
 */
SPM_API int spm_close(spm_pool *pool);

/*
 * spm_root -- the root object: allocated and zeroed (durably) on the first
 * call, the same object on every later call and open.  size must be > 0 and
 * not larger than the size of the first call.  NULL on failure, with
 * spm_errcode() saying why: SPM_E_INVAL (a bad size), SPM_E_NOSPACE (the
 * first call's size does not fit the heap), SPM_E_BUSY (no lane free).
 * Refused inside a transaction of the calling thread (NULL, SPM_E_TXSTATE).
 * The root lives as long as the pool: spm_tx_free refuses it.
 */
SPM_API void *spm_root(spm_pool *pool, size_t size);

/* spm_ptr -- the view address of offset off; NULL if off is below 4096 (page 0
 * is the controller's data header, so 0 is null) or not below spm_size().
 * spm_ptr, spm_off, spm_size and spm_design only read the handle; in a
 * child of fork() they return NULL or 0 (SPM_E_INVAL, see fork() above). */
SPM_API void *spm_ptr(spm_pool *pool, spm_off_t off);

/* spm_off -- the offset of view address ptr; 0 if ptr is not in the pool. */
SPM_API spm_off_t spm_off(spm_pool *pool, const void *ptr);

/* spm_size -- the pool's size in bytes. */
SPM_API size_t spm_size(spm_pool *pool);

/*
 * spm_flush -- write back (clwb) every line overlapping [addr, addr+len) to
 * the controller: each is encrypted and enters the write queue.  Asynchronous
 * in modeled time: spm_drain() waits for acceptance.
 */
SPM_API void spm_flush(spm_pool *pool, const void *addr, size_t len);

/* spm_drain -- fence (sfence): every write-back of this thread is accepted. */
SPM_API void spm_drain(spm_pool *pool);

/* spm_persist -- spm_flush() then spm_drain(). */
SPM_API void spm_persist(spm_pool *pool, const void *addr, size_t len);

/*
 * spm_counter_atomic -- declare the lines overlapping [addr, addr+len)
 * CounterAtomic, persistently (the declaration survives close and crash).
 * In sca every write-back of such a line enters the data and counter write
 * queues together, with ready bits (SCA section 5.2).  Other designs accept
 * and ignore the declaration.  Returns 0 or SPM_E_INVAL.
 */
SPM_API int spm_counter_atomic(spm_pool *pool, const void *addr, size_t len);

/*
 * spm_counter_cache_writeback -- write back the dirty counter cache lines
 * holding the counters of [addr, addr+len) (SCA section 4.3).  Follow it with
 * spm_drain() to make them durable.  A no-op where counters are never cached
 * dirty.
 */
SPM_API void spm_counter_cache_writeback(spm_pool *pool, const void *addr,
					 size_t len);

/*
 * spm_core_set -- the modeled core on whose clock this thread's operations on
 * pool are charged (default 0; at most 64 cores).  Cores share the banks,
 * queues and AES engine of the timing model.
 */
SPM_API int spm_core_set(spm_pool *pool, unsigned core);

/*
 * spm_model_work -- charge ns nanoseconds of the program's own work to the
 * modeled clock of the calling thread's core (spm_core_set).  An
 * instrumented program's loads and stores are modeled (README, "The core
 * model": their issue time, the caches, memory reads); anything else the
 * model does not see -- an uninstrumented program's work, the runtime
 * library's own instructions -- is free unless charged here.  Writes already
 * accepted into the write queues drain to their banks meanwhile, so work
 * between persists hides write latency as it does on real hardware.
 * spm-bench's --work-ns charges a fixed amount per operation.  Because the
 * queues drain during the work, it changes wpq.stalls and, in designs that
 * coalesce counter writes (wt-cwc, supermem), wpq.coalesced and the media
 * write counts too: compare write traffic only between runs with the same
 * work.  ns above UINT64_MAX / 1000 is ignored; the clock saturates.
 */
SPM_API void spm_model_work(spm_pool *pool, uint64_t ns);

/*
 * Transactions: undo logging in the three stages of the counter-atomicity
 * paper's Figure 9.  spm_tx_add() logs the old content of a range (prepare:
 * log + counter write-back + barrier) before the caller modifies it;
 * spm_tx_commit() persists the modified ranges (mutate: write-back + counter
 * write-back + barrier) and invalidates the log with one counter-atomic write
 * (commit).  A crash before that write rolls the transaction back at the next
 * open; after it, the transaction is durable.
 *
 * spm_tx_begin   -- start a transaction on the calling thread.
 *                   SPM_E_TXSTATE if one is open, SPM_E_BUSY if all lanes are taken.
 * spm_tx_add     -- snapshot the lines of [addr, addr+len) (inside the heap)
 *                   into the log (optional with tx_track=pages, above).  Ranges added twice are logged once.  0 or
 *                   error.  Snapshots are whole 64-byte lines (a line written
 *                   without its counter is lost whole after a crash in sca),
 *                   and a line belongs to one open transaction at a time:
 *                   another transaction's spm_tx_add of it fails with
 *                   SPM_E_BUSY (abort, retry).  Objects from spm_tx_alloc are
 *                   line-aligned, so this only concerns transactions that
 *                   modify the same object concurrently.  A transaction's
 *                   log holds at least 32512 bytes of entries (an entry: the
 *                   snapshotted lines plus one line), more if its lane's log
 *                   ring allows; beyond that SPM_E_NOSPACE (abort it).
 *                   A failed spm_tx_add changes nothing: the range is not
 *                   snapshotted (do not modify it), earlier ranges stay
 *                   logged and the transaction stays open; the caller may
 *                   go on (a later commit makes durable what was added) or
 *                   spm_tx_abort() it.
 * spm_tx_alloc   -- a zeroed object of size bytes, owned by the transaction:
 *                   it becomes allocated at commit and vanishes at abort or a
 *                   crash before commit.  Its content is persisted at commit
 *                   without logging; its allocation costs the log a few
 *                   lines (at most about 11) whatever its size, so one
 *                   transaction can allocate or free objects up to the
 *                   heap's size.  0 on failure, the transaction still open;
 *                   spm_errcode() says why: SPM_E_NOSPACE (no free run of
 *                   that size), SPM_E_INVAL (size 0 or above the pool's),
 *                   SPM_E_TXSTATE (no transaction), -ENOMEM.
 * spm_tx_free    -- free the object at off at commit.  SPM_E_INVAL if off is
 *                   not the start of an allocated object, is freed twice in
 *                   the transaction, or is the root object (spm_root).
 * spm_tx_commit  -- make the transaction durable and end it.  0 or error; on
 *                   error the transaction is aborted.
 * spm_tx_abort   -- restore every added range and end the transaction.
 */
SPM_API int spm_tx_begin(spm_pool *pool);
SPM_API int spm_tx_add(spm_pool *pool, const void *addr, size_t len);
SPM_API spm_off_t spm_tx_alloc(spm_pool *pool, size_t size);
SPM_API int spm_tx_free(spm_pool *pool, spm_off_t off);
SPM_API int spm_tx_commit(spm_pool *pool);
SPM_API void spm_tx_abort(spm_pool *pool);

/*
 * spm_stat -- read a statistic by name into *value.  SPM_E_INVAL (and a
 * message) for an unknown name; a read leaves the thread's last message and
 * code as they were.  spm_stat_names() lists every name.  Names:
 *   tx.committed tx.aborted          transactions
 *   tx.log_wraps                     transactions whose log went on at the
 *                                    start of their lane's ring (txlog.c)
 *   time.modeled_ns                  modeled time: the largest core clock
 *   time.core<i>_ns                  the clock of modeled core i (0..63), e.g.
 *                                    time.core0_ns (see spm_core_set)
 *   media.writes                     data, log and counter write requests (the
 *                                    sum of the next three)
 *   media.writes.data / .counter     by class (a co-located write counts as data)
 *   media.writes.log                 data writes to transaction log lines
 *   media.writes.meta                controller bookkeeping, not in media.writes:
 *                                    the clean/dirty word and the counter-cache
 *                                    shadow table (one write per cache miss in
 *                                    sca and unsafe, see doc/design.md)
 *   media.bytes_written              bytes of the media.writes (64 a line; a
 *                                    co-located write 72)
 *   media.reads                      media read requests (open, recovery, counter misses)
 *   ctr_cache.hits / .misses / .evictions / .writebacks
 *   aes.pads                         64-byte pads generated (4 AES blocks each)
 *   wpq.stalls                       enqueues that waited for a free slot
 *   wpq.coalesced                    counter writes merged into a queued write of
 *                                    the same counter line (wt-cwc, supermem)
 *   ctrl.ca_writes                   counter-atomic write pairs
 *   ctrl.writes                      line write-backs received
 *   recovery.drained / .dropped      ADR entries drained / dropped at recovery
 *   recovery.rolled_back             transactions rolled back at open
 *   recovery.reencrypted             lines re-encrypted past possibly lost counters
 *   ctr_cache.stop_loss_writebacks   counter lines written back after stop_loss increments
 *   evict.lines                      lines written back early by SPM_EVICT
 *   ctr.reencrypted_pages            pages re-encrypted on a minor counter overflow
 *   The core model (README "The core model"; all 0 in a program that is not
 *   instrumented, whose model is write-backs and fences only):
 *   core.accesses                    loads and stores the program issued, in a
 *                                    pool or not (each costs its issue time)
 *   core.loads / core.stores         line accesses in the pool's view (modeled
 *                                    by the caches)
 *   l1.hits / l1.misses              private L1 lookups
 *   l2.hits / l2.misses              private L2 (where the profile has one)
 *   llc.hits / llc.misses            the shared last-level cache
 *   llc.writebacks                   dirty lines the LLC evicted: written back
 *                                    through the design's write path
 *   mem.reads                        data line reads for LLC misses
 *   mem.read_ns                      their latencies, summed (queue, bank,
 *                                    counter lookup, decryption)
 *   aes.ops                          pads the AES engine made for writes (reads'
 *                                    pads overlap the read and are not booked)
 *   aes.queue_ns                     their waits for the engine, summed
 *   mem.writes                       data and log line writes the memory took
 *                                    (and the dedup designs' cancelled ones)
 *   mem.write_ns                     their latencies, summed: from the write-
 *                                    back's arrival (counter designs: its
 *                                    counter and pad; dedup: its detection)
 *                                    to the end of its bank write; a cancelled
 *                                    write ends with its detection (the redo
 *                                    and integrity designs: from the queue)
 *   The redo designs (srl, lame, clame; 0 elsewhere):
 *   redo.commits                     transactions the controller committed
 *   redo.commit_ns                   their commit latencies, summed (from the
 *                                    commit's first log entry to its commit
 *                                    record's acceptance)
 *   redo.records / redo.entries      log records and entries written (their
 *                                    lines count in media.writes.log, with
 *                                    headers, counter blocks, commit records)
 *   redo.enc_ns                      log entries' encryption latencies, summed:
 *                                    counter access and AES engine, queueing
 *                                    included (the paper's Figure 6)
 *   redo.inplace_lines               entries applied in place (home written)
 *   redo.log_reads                   memory reads served from the log (the
 *                                    mapping table)
 *   redo.ctrbuf_writes               speculative counter lines evicted to the
 *                                    counter buffer
 *   redo.held_writebacks             write-backs of lines an open transaction
 *                                    declared, held for its commit
 *   The integrity designs (bmt-nocc, sc, osiris, ccnvm-nods, ccnvm):
 *   mac.computed / mac.verified      MACs made and checked
 *   bmt.node_writes                  tree node lines written
 *   bmt.drains / bmt.drain_lines     epochs drained, and their lines
 *   recovery.mac_retries             counter trials of recovery
 *   The dedup designs (dewrite...; units of dedup_line bytes):
 *   dedup.writes                     unit write-backs checked
 *   dedup.writes_cancelled           found in the media and not written
 *   dedup.crc_hits                   CRC-32 found in the hash table
 *   dedup.compare_fail               of those, a different content
 *   dedup.predict_right / _wrong     the history window's guesses
 *   dedup.shared_lines               units with more than one reader (now)
 *   dedup.live_lines                 units with a reader (now)
 *   dedup.table_bytes                the tables in the meta file
 *   dedup.overhead_ppm               the tables as DeWrite counts them, per
 *                                    million bytes of data
 */
SPM_API int spm_stat(spm_pool *pool, const char *name, uint64_t *value);

/* spm_stat_names -- every name spm_stat() reads (time.core0_ns to
 * time.core63_ns included), a static NULL-terminated array. */
SPM_API const char *const *spm_stat_names(void);

/* spm_stat_reset -- zero every statistic and the modeled clocks. */
SPM_API void spm_stat_reset(spm_pool *pool);

/* spm_design -- the pool's design name (valid while the pool is open). */
SPM_API const char *spm_design(spm_pool *pool);

/* spm_errormsg -- the calling thread's last error message ("" if none). */
SPM_API const char *spm_errormsg(void);

/*
 * spm_errcode -- the calling thread's last error code: the SPM_E_* or -errno
 * that came with spm_errormsg()'s message (0 if none).  Like errno, a later
 * successful call does not reset it (spm_create and spm_open do, at their
 * start); read it right after the call that failed.
 */
SPM_API int spm_errcode(void);

/* spm_strerror -- a static description of error code err. */
SPM_API const char *spm_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* SPM_H */
