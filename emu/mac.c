/*
 * mac.c -- the keyed MAC engine of the integrity designs: SipHash-2-4 with a
 * 128-bit tag through OpenSSL's EVP_MAC "SIPHASH".  No nonce (a tree node is
 * rewritten in place under the same id), and the fastest of libcrypto's MACs
 * on these short messages (bench/mac_speed.c; doc/tried.md, "Choosing the
 * MAC").  Each message is a domain byte, then fixed-length fields, little-endian:
 *     line MAC: 0x01 || ct[64] || le64(ctr) || le64(line)   (81 bytes)
 *     node MAC: 0x02 || child[64] || le64(id)               (73 bytes)
 * The context is keyed once; each message re-initializes it with the same
 * key (EVP_MAC_init without a key), the cheapest way measured.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "spm.h"
#include "emu.h"
#include "mac.h"

#define DOMAIN_LINE 0x01u
#define DOMAIN_NODE 0x02u
#define LINE_MSG (1 + 64 + 8 + 8)
#define NODE_MSG (1 + 64 + 8)

struct mac {
	EVP_MAC_CTX *ctx; /* keyed; re-initialized for each message */
};

/* put_le64 -- store v little-endian. */
static inline void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

/* keyed_ctx -- a SipHash-2-4 context for key with a 16-byte tag, or NULL. */
static EVP_MAC_CTX *keyed_ctx(const uint8_t key[16])
{
	EVP_MAC *alg = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	EVP_MAC_CTX *ctx = alg ? EVP_MAC_CTX_new(alg) : NULL;
	EVP_MAC_free(alg); /* the context holds its own reference */
	size_t size = MAC_SIZE;
	unsigned c_rounds = 2, d_rounds = 4;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
		OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_C_ROUNDS, &c_rounds),
		OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_D_ROUNDS, &d_rounds),
		OSSL_PARAM_construct_end(),
	};
	if (ctx && EVP_MAC_init(ctx, key, MAC_KEY_SIZE, params) == 1 &&
	    EVP_MAC_CTX_get_mac_size(ctx) == MAC_SIZE)
		return ctx;
	EVP_MAC_CTX_free(ctx);
	return NULL;
}

/* mac_new -- a context for key. */
int mac_new(struct mac **out, const uint8_t key[16])
{
	struct mac *m = calloc(1, sizeof(*m));
	if (!m)
		return emu_err(-ENOMEM, "out of memory for the MAC engine");
	if (!(m->ctx = keyed_ctx(key))) {
		free(m);
		return emu_err(SPM_E_CRYPTO, "OpenSSL: cannot set up " MAC_NAME);
	}
	*out = m;
	return 0;
}

/* mac_free -- free the context (NULL is a no-op). */
void mac_free(struct mac *m)
{
	if (!m)
		return;
	EVP_MAC_CTX_free(m->ctx);
	free(m);
}

/* msg_mac -- the MAC of len bytes of msg through ctx; 0, or -1 (no message:
 * the callers say what failed). */
static inline int msg_mac(EVP_MAC_CTX *ctx, const void *msg, size_t len, uint8_t out[16])
{
	size_t got = 0;
	if (EVP_MAC_init(ctx, NULL, 0, NULL) != 1 || EVP_MAC_update(ctx, msg, len) != 1 ||
	    EVP_MAC_final(ctx, out, &got, MAC_SIZE) != 1 || got != MAC_SIZE)
		return -1;
	return 0;
}

/* failed -- the error every MAC call returns when OpenSSL fails. */
static int failed(void)
{
	return emu_err(SPM_E_CRYPTO, "OpenSSL: " MAC_NAME " failed");
}

/* mac_raw -- the bare primitive over msg. */
int mac_raw(struct mac *m, const void *msg, size_t len, uint8_t out[16])
{
	return msg_mac(m->ctx, msg, len, out) ? failed() : 0;
}

/* line_fields -- a line message's fields after its domain byte. */
static inline void line_fields(uint8_t msg[LINE_MSG], const uint8_t ct[64], uint64_t ctr,
			       uint64_t line)
{
	memcpy(msg + 1, ct, 64);
	put_le64(msg + 65, ctr);
	put_le64(msg + 73, line);
}

/* mac_line -- the data MAC of one line. */
int mac_line(struct mac *m, const uint8_t ct[64], uint64_t ctr, uint64_t line,
	     uint8_t out[16])
{
	uint8_t msg[LINE_MSG];
	msg[0] = DOMAIN_LINE;
	line_fields(msg, ct, ctr, line);
	return msg_mac(m->ctx, msg, sizeof(msg), out) ? failed() : 0;
}

/* mac_lines -- n data MACs: one message buffer, its domain byte written once. */
int mac_lines(struct mac *m, const uint8_t *ct, const uint64_t *ctr, const uint64_t *line,
	      size_t n, uint8_t *out)
{
	uint8_t msg[LINE_MSG];
	msg[0] = DOMAIN_LINE;
	for (size_t i = 0; i < n; i++) {
		line_fields(msg, ct + 64 * i, ctr[i], line[i]);
		if (msg_mac(m->ctx, msg, sizeof(msg), out + MAC_SIZE * i))
			return failed();
	}
	return 0;
}

/* mac_node -- a tree node's MAC of one child. */
int mac_node(struct mac *m, const uint8_t child[64], uint64_t id, uint8_t out[16])
{
	uint8_t msg[NODE_MSG];
	msg[0] = DOMAIN_NODE;
	memcpy(msg + 1, child, 64);
	put_le64(msg + 65, id);
	return msg_mac(m->ctx, msg, sizeof(msg), out) ? failed() : 0;
}
