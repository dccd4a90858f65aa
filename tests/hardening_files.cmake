# hardening_files.cmake -- tests of the pool's files: key trust, rollback, atomic create, locks.
