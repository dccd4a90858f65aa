# hardening_files.cmake -- tests of the pool's files: key trust, rollback, atomic create, locks.
# Key files, rollback, forged epochs, ciphertext from create on, a
# hard-linked meta file, long names.
spm_test(test_trust unit)
# spm_create killed at every crash point it passes: complete, or free.
spm_test(test_create_crash crash)
# spm_rekey_key (a new key) killed at every crash point it passes: the pool
# opens under the old key or the new one, and a second re-key succeeds.
spm_test(test_rekey_key crash)
# Attacks on the pool's files (spoofing, splicing, replay, rollback) on the
# integrity designs, clean and after a crash, and on the controls.
spm_test(test_attack attack internal)
# The integrity designs' options, register file, recovery by MAC trial and
# the replay cc-NVM can detect but not locate.
spm_test(test_integrity attack internal)
# The dedup designs: sharing, copy on write, freeing, CRC collisions and
# the pads they reuse under the paper's scheme, options, damaged tables.
spm_test(test_dedup unit internal)
