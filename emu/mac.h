/*
 * mac.h -- the keyed MAC engine of the integrity designs (mac.c): the data MAC
 * of a line and a tree node's MAC of a child, 16 bytes each, by SipHash-2-4
 * with a 128-bit tag (doc/tried.md, "Choosing the MAC").
 */
#ifndef SPM_MAC_H
#define SPM_MAC_H 1

#include <stddef.h>
#include <stdint.h>

#define MAC_SIZE 16u     /* bytes of every MAC */
#define MAC_KEY_SIZE 16u /* bytes of the key */
#define MAC_NAME "SipHash-2-4-128"

/* One MAC context: not thread-safe; one per thread. */
struct mac;

/* mac_new -- a context for key; 0, or a negative code (SPM_E_CRYPTO,
 * -ENOMEM) with the message set through emu_err().  The other calls return
 * 0 or SPM_E_CRYPTO the same way. */
int mac_new(struct mac **out, const uint8_t key[16]);
void mac_free(struct mac *m);

/* mac_line -- the data MAC of a line (Bonsai Merkle tree, cc-NVM section
 * 2.2): over its 64-byte ciphertext ct, its counter ctr and its line
 * address line; 16 bytes to out. */
int mac_line(struct mac *m, const uint8_t ct[64], uint64_t ctr, uint64_t line,
	     uint8_t out[16]);
/* mac_lines -- n data MACs at once: line i's ciphertext at ct + 64 * i, its
 * counter ctr[i], its address line[i], its MAC to out + 16 * i. */
int mac_lines(struct mac *m, const uint8_t *ct, const uint64_t *ctr, const uint64_t *line,
	      size_t n, uint8_t *out);
/* mac_node -- a tree node's MAC of one 64-byte child (a counter line or a
 * node) at tree position id; 16 bytes to out. */
int mac_node(struct mac *m, const uint8_t child[64], uint64_t id, uint8_t out[16]);

/* mac_raw -- the bare primitive over len bytes of msg, no domain byte nor
 * fields (known-answer tests). */
int mac_raw(struct mac *m, const void *msg, size_t len, uint8_t out[16]);

#endif
