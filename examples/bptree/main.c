/* main.c -- the command spm-bptree: create, run and check (see workload.c). */
#include "ex_main.h"

int main(int argc, char **argv)
{
	return ex_main(&ex_ds_bptree, argc, argv);
}
