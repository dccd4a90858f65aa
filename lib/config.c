/*
 * config.c -- the option syntax "key=value;key=value" shared by the options
 * argument and the SPM_CONF environment variable (in the manner of PMDK's
 * PMEMOBJ_CONF).  Keys given in options win over SPM_CONF.  Unknown keys and
 * bad values are errors, never ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool_internal.h"

/* parse_uint -- a decimal in [lo, hi]. */
static int parse_uint(const char *src, const char *key, const char *v,
		      unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || x < lo || x > hi)
		return emu_err(SPM_E_OPTION, "%s: %s=%s: expected a whole number in [%u, %u]",
			       src, key, v, lo, hi);
	*out = (unsigned)x;
	return 0;
}

/* parse_ns -- a non-negative decimal number of nanoseconds (not hex, not
 * so small that it underflows). */
static int parse_ns(const char *src, const char *key, const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno == ERANGE || strpbrk(v, "xX") || !(x >= 0 && x < 1e9))
		return emu_err(SPM_E_OPTION, "%s: %s=%s: expected nanoseconds >= 0",
			       src, key, v);
	*out = x;
	return 0;
}

/* parse_mhz -- a decimal number of MHz, 0 (the profile's) up to 10^5: a
 * line's burst of a few beats stays picoseconds or more. */
static int parse_mhz(const char *src, const char *key, const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno == ERANGE || strpbrk(v, "xX") || !(x >= 0 && x <= 1e5))
		return emu_err(SPM_E_OPTION, "%s: %s=%s: expected MHz in [0, 100000] (0: the "
			       "profile's)", src, key, v);
	*out = x;
	return 0;
}

/* parse_flag -- 0 or 1, into an int. */
static int parse_flag(const char *src, const char *key, const char *v, int *out)
{
	unsigned x;
	int rc = parse_uint(src, key, v, 0, 1, &x);
	if (!rc)
		*out = (int)x;
	return rc;
}

/* parse_pair -- one of two words: *out = 1 for yes, 0 for no. */
static int parse_pair(const char *src, const char *key, const char *v, const char *yes,
		      const char *no, int *out)
{
	if (strcmp(v, yes) && strcmp(v, no))
		return emu_err(SPM_E_OPTION, "%s: %s=%s: %s or %s", src, key, v, yes, no);
	*out = !strcmp(v, yes);
	return 0;
}

/* parse_str -- copy a string value that must fit. */
static int parse_str(const char *src, const char *key, const char *v, char *out,
		     size_t n)
{
	if (!*v || strlen(v) >= n)
		return emu_err(SPM_E_OPTION, "%s: %s: empty or too long", src, key);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/* parse_layout -- layout=NAME: 1 to 63 bytes, no ';' (the option separator,
 * so a name could never be given back at open). */
static int parse_layout(const char *src, const char *v, char *out, size_t n)
{
	if (!*v || strlen(v) >= n || strchr(v, ';'))
		return emu_err(SPM_E_OPTION, "%s: layout=%s: 1 to %zu bytes, no ';'", src, v,
			       n - 1);
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/* parse_ctr_recovery -- ctr_recovery=advance|none; none reuses pads after a
 * crash (it exists to show that the pad auditor finds reuse): a test knob. */
static int parse_ctr_recovery(const char *src, const char *v, int *out)
{
	int rc = parse_pair(src, "ctr_recovery", v, "none", "advance", out);
	if (!rc && *out && !emu_test_knobs())
		rc = emu_err(SPM_E_OPTION, "%s: ctr_recovery=none is a test knob (it lets "
			     "a crash reuse encryption pads): refused unless %s=1",
			     src, EMU_TEST_KNOBS_ENV);
	return rc;
}

/* set_key -- apply one key=value. */
static int set_key(struct emu_config *c, const char *src, const char *k,
		   const char *v)
{
	struct {
		const char *key;
		double *ns;
	} times[] = {{"t_rcd", &c->t_rcd}, {"t_cl", &c->t_cl}, {"t_cwd", &c->t_cwd},
		     {"t_faw", &c->t_faw}, {"t_wtr", &c->t_wtr}, {"t_wr", &c->t_wr},
		     {"aes_ns", &c->aes_ns}};
	if (!strcmp(k, "design"))
		return parse_str(src, k, v, c->design, sizeof(c->design));
	if (!strcmp(k, "layout"))
		return parse_layout(src, v, c->layout, sizeof(c->layout));
	if (!strcmp(k, "profile"))
		return parse_str(src, k, v, c->profile, sizeof(c->profile));
	if (!strcmp(k, "key_file"))
		return parse_str(src, k, v, c->key_file, sizeof(c->key_file));
	if (!strcmp(k, "aes_bits")) {
		int rc = parse_uint(src, k, v, 128, 256, &c->aes_bits);
		if (!rc && c->aes_bits != 128 && c->aes_bits != 256)
			rc = emu_err(SPM_E_OPTION, "%s: aes_bits=%s: 128 or 256", src, v);
		return rc;
	}
	if (!strcmp(k, "ctr_cache_kib"))
		return parse_uint(src, k, v, 1, 1u << 20, &c->ctr_cache_kib);
	if (!strcmp(k, "ctr_cache_ways"))
		return parse_uint(src, k, v, 1, 1024, &c->ctr_cache_ways);
	if (!strcmp(k, "wpq_data"))
		return parse_uint(src, k, v, 1, 256, &c->wpq_data);
	if (!strcmp(k, "wpq_ctr"))
		return parse_uint(src, k, v, 1, 256, &c->wpq_ctr);
	if (!strcmp(k, "banks"))
		return parse_uint(src, k, v, 1, 64, &c->banks);
	if (!strcmp(k, "bank_lines"))
		return parse_uint(src, k, v, 1, 1u << 24, &c->bank_lines);
	if (!strcmp(k, "bank_hash"))
		return parse_flag(src, k, v, &c->bank_hash);
	if (!strcmp(k, "core_banks"))
		return parse_flag(src, k, v, &c->core_banks);
	if (!strcmp(k, "wpq_order"))
		return parse_pair(src, k, v, "any", "fifo", &c->wpq_any);
	if (!strcmp(k, "timing"))
		return parse_pair(src, k, v, "off", "on", &c->timing_off);
	if (!strcmp(k, "alloc"))
		return parse_pair(src, k, v, "lanes", "shared", &c->alloc_lanes);
	if (!strcmp(k, "channels"))
		return parse_uint(src, k, v, 1, 16, &c->channels);
	if (!strcmp(k, "prefault"))
		return parse_flag(src, k, v, &c->prefault);
	if (!strcmp(k, "tx_track"))
		return parse_pair(src, k, v, "pages", "off", &c->tx_track);
	if (!strcmp(k, "wpq_issue"))
		return parse_pair(src, k, v, "inorder", "bankfree", &c->wpq_inorder);
	if (!strcmp(k, "wpq_window"))
		return parse_uint(src, k, v, 1, EMU_MAX_WPQ_WINDOW, &c->wpq_window);
	if (!strcmp(k, "minor_bits"))
		return parse_uint(src, k, v, 1, 7, &c->minor_bits);
	if (!strcmp(k, "ctr_placement"))
		return parse_str(src, k, v, c->ctr_placement, sizeof(c->ctr_placement));
	if (!strcmp(k, "durability")) {
		static const char *const modes[] = {"auto", "pmem", "msync", "none"};
		for (int i = 0; i < 4; i++)
			if (!strcmp(v, modes[i])) {
				c->durability = i;
				return 0;
			}
		return emu_err(SPM_E_OPTION, "%s: durability=%s: auto, pmem, msync or none",
			       src, v);
	}
	if (!strcmp(k, "cores"))
		return parse_uint(src, k, v, 1, EMU_MAX_CORES, &c->cores);
	if (!strcmp(k, "l1_kib"))
		return parse_uint(src, k, v, 1, 1u << 20, &c->l1_kib);
	if (!strcmp(k, "l2_kib"))
		return parse_uint(src, k, v, 1, 1u << 20, &c->l2_kib);
	if (!strcmp(k, "llc_kib"))
		return parse_uint(src, k, v, 1, 1u << 22, &c->llc_kib);
	if (!strcmp(k, "core_model"))
		return parse_pair(src, k, v, "off", "on", &c->core_model_off);
	if (!strcmp(k, "access_ns"))
		return parse_ns(src, k, v, &c->access_ns);
	if (!strcmp(k, "bus_mhz"))
		return parse_mhz(src, k, v, &c->bus_mhz);
	if (!strcmp(k, "ctr_recovery"))
		return parse_ctr_recovery(src, v, &c->no_ctr_recovery);
	if (!strcmp(k, "log_kib"))
		return parse_uint(src, k, v, 2, 1u << 22, &c->log_kib);
	if (!strcmp(k, "bmt_n"))
		return parse_uint(src, k, v, 1, 4096, &c->bmt_n);
	if (!strcmp(k, "bmt_m"))
		return parse_uint(src, k, v, 4, 256, &c->bmt_m);
	if (!strcmp(k, "dedup_line")) {
		if (!strcmp(v, "64") || !strcmp(v, "256")) {
			c->dedup_line = (unsigned)atoi(v);
			return 0;
		}
		return emu_err(SPM_E_OPTION, "%s: dedup_line=%s: 64 or 256", src, v);
	}
	if (!strcmp(k, "dewrite_pad")) {
		if (!strcmp(v, "crc") || !strcmp(v, "version")) {
			c->dewrite_pad = !strcmp(v, "crc") ? 1 : 2;
			return 0;
		}
		return emu_err(SPM_E_OPTION, "%s: dewrite_pad=%s: crc or version", src, v);
	}
	if (!strcmp(k, "dedup_window"))
		return parse_uint(src, k, v, 1, 63, &c->dedup_window);
	if (!strcmp(k, "dedup_early_map")) {
		int rc = parse_flag(src, k, v, &c->dedup_early_map);
		if (!rc && c->dedup_early_map && !emu_test_knobs())
			rc = emu_err(SPM_E_OPTION, "%s: dedup_early_map=1 is a test knob (a "
				     "negative control: it breaks crash consistency): refused "
				     "unless %s=1", src, EMU_TEST_KNOBS_ENV);
		return rc;
	}
	if (!strcmp(k, "redo_early_apply")) {
		int rc = parse_flag(src, k, v, &c->redo_early_apply);
		if (!rc && c->redo_early_apply && !emu_test_knobs())
			rc = emu_err(SPM_E_OPTION, "%s: redo_early_apply=1 is a test knob (a "
				     "negative control: it breaks crash consistency): refused "
				     "unless %s=1", src, EMU_TEST_KNOBS_ENV);
		return rc;
	}
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		if (!strcmp(k, times[i].key))
			return parse_ns(src, k, v, times[i].ns);
	return emu_err(SPM_E_OPTION, "%s: unknown option \"%s\"", src, k);
}

/* trim -- strip blanks at both ends, in place. */
static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* parse_into -- apply every key=value of str. */
static int parse_into(struct emu_config *c, const char *src, const char *str)
{
	char *copy = strdup(str), *save = NULL;
	if (!copy)
		return emu_err(-ENOMEM, "out of memory");
	int rc = 0;
	for (char *item = strtok_r(copy, ";", &save); item && !rc;
	     item = strtok_r(NULL, ";", &save)) {
		char *kv = trim(item);
		if (!*kv)
			continue;
		char *eq = strchr(kv, '=');
		if (!eq) {
			rc = emu_err(SPM_E_OPTION, "%s: \"%s\" is not key=value", src, kv);
			break;
		}
		*eq = '\0';
		rc = set_key(c, src, trim(kv), trim(eq + 1));
	}
	free(copy);
	return rc;
}

/* config_parse -- defaults, then SPM_CONF, then options. */
int config_parse(struct emu_config *cfg, const char *options)
{
	emu_config_init(cfg);
	const char *env = getenv("SPM_CONF");
	int rc = 0;
	if (env && *env)
		rc = parse_into(cfg, "SPM_CONF", env);
	if (!rc && options && *options)
		rc = parse_into(cfg, "options", options);
	return rc;
}
