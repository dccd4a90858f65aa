# hardening_cli.cmake -- tests of options, crash points, layouts and the examples' command lines.
