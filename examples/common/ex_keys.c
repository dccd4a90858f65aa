/*
 * ex_keys.c -- the --keys option and the Zipfian key generator of the map
 * workloads (see ex_keys.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex_main.h"

#define ZIPF_SALT 0x7a697066u /* "zipf": its keys are not the uniform ones */

/* theta_of -- the exponent a code holds (any double; valid or not). */
static double theta_of(uint64_t code)
{
	double theta;
	memcpy(&theta, &code, sizeof(theta));
	return theta;
}

int ex_keys_valid(uint64_t code)
{
	double theta = theta_of(code);
	return code == 0 || (theta > 0.0 && theta < 1.0);
}

int ex_keys_parse(const char *s, uint64_t *code)
{
	if (!s)
		return -1;
	if (strcmp(s, "uniform") == 0) {
		*code = 0;
		return 0;
	}
	if (strncmp(s, "zipf:", 5) != 0)
		return -1;
	const char *t = s + 5;
	if ((*t < '0' || *t > '9') && *t != '.') /* no sign, space, inf or nan */
		return -1;
	char *end;
	errno = 0;
	double theta = strtod(t, &end);
	if (errno || end == t || *end || !(theta > 0.0 && theta < 1.0))
		return -1;
	memcpy(code, &theta, sizeof(*code));
	return 0;
}

void ex_keys_name(uint64_t code, char *buf, size_t size)
{
	double theta = theta_of(code);
	if (code == 0) {
		snprintf(buf, size, "uniform");
		return;
	}
	/* the fewest digits that give THETA back, as --keys took it */
	for (int digits = 6; digits <= 17; digits++) {
		char s[40];
		snprintf(s, sizeof(s), "%.*g", digits, theta);
		if (strtod(s, NULL) == theta || digits == 17) {
			snprintf(buf, size, "zipf:%s", s);
			return;
		}
	}
}

/* zeta -- the sum of 1 / i^theta for i = 1..n, smallest terms first. */
static double zeta(uint64_t n, double theta)
{
	double sum = 0.0;
	for (uint64_t i = n; i >= 1; i--)
		sum += pow((double)i, -theta);
	return sum;
}

int ex_zipf_init(struct ex_zipf *z, uint64_t code)
{
	double theta = theta_of(code), n = (double)EX_ZIPF_KEYS;
	if (code == 0 || !ex_keys_valid(code))
		return -1;
	z->zetan = zeta(EX_ZIPF_KEYS, theta);
	z->zeta2 = 1.0 + pow(0.5, theta);
	z->alpha = 1.0 / (1.0 - theta);
	z->eta = (1.0 - pow(2.0 / n, 1.0 - theta)) / (1.0 - z->zeta2 / z->zetan);
	z->code = code;
	return 0;
}

uint64_t ex_zipf_rank(const struct ex_zipf *z, uint64_t rnd)
{
	double u = (double)(rnd >> 11) * 0x1p-53; /* uniform in [0, 1) */
	double uz = u * z->zetan;
	if (uz < 1.0)
		return 0;
	if (uz < z->zeta2)
		return 1;
	/* beyond the first two ranks: Gray et al.'s closed form, at least 2 */
	double r = (double)EX_ZIPF_KEYS * pow(z->eta * u - z->eta + 1.0, z->alpha);
	if (!(r >= 2.0))
		return 2;
	return r < (double)EX_ZIPF_KEYS ? (uint64_t)r : EX_ZIPF_KEYS - 1;
}

uint64_t ex_zipf_key(uint64_t rank)
{
	return ex_mix64(rank ^ ZIPF_SALT);
}
