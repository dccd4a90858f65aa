// test_header_cxx.cpp -- spm.h compiles as C++ and its error table is complete.
#include <spm.h>

#include <cstring>

int main()
{
	for (int e = SPM_E_BASE; e >= SPM_E_LAST; e--)
		if (std::strcmp(spm_strerror(e), "unknown error") == 0)
			return 1;
	return std::strcmp(spm_strerror(0), "success") == 0 ? 0 : 1;
}
