# readme.cmake -- tests of the README's program, compiled and run as a user would.
