/*
 * crypto.c -- the AES engine of the memory controller (counter mode, SCA
 * section 2 / SuperMem section 2.2.4).  The pad (OTP) of a 64-byte line is
 * four AES blocks of seeds unique per (line, counter, block):
 *     seed(line, ctr, b) = le64(4*line + b) || le64(ctr)
 * made in place in the pad buffer and encrypted by one ECB call (a per-line CTR
 * re-init costs ~4x more).
 * One OpenSSL cipher context per thread, and one for the controller's write
 * path, whose callers hold the controller's lock (no thread-local lookup).
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "spm.h"
#include "emu_internal.h"

struct ctx_node {
	EVP_CIPHER_CTX *ctx;
	struct ctx_node *next;
};

struct crypto {
	uint8_t key[32];
	unsigned bits;
	pthread_key_t tls;
	pthread_mutex_t lock;
	struct ctx_node *all; /* every context made, freed with the engine */
	EVP_CIPHER_CTX *ctl;  /* the controller's (crypto_line_pads_ctl) */
};

/* ctx_new -- an AES-ECB encryption context for c's key, no padding. */
static EVP_CIPHER_CTX *ctx_new(const struct crypto *c)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *cipher = c->bits == 128 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
	if (ctx && EVP_EncryptInit_ex(ctx, cipher, NULL, c->key, NULL) == 1) {
		EVP_CIPHER_CTX_set_padding(ctx, 0);
		return ctx;
	}
	EVP_CIPHER_CTX_free(ctx);
	return NULL;
}

/* crypto_new -- an engine for key (bits = 128 or 256). */
int crypto_new(struct crypto **out, const uint8_t *key, unsigned bits)
{
	if (bits != 128 && bits != 256)
		return emu_err(SPM_E_OPTION, "aes_bits must be 128 or 256, not %u", bits);
	struct crypto *c = calloc(1, sizeof(*c));
	if (!c)
		return emu_err(-ENOMEM, "out of memory for the AES engine");
	memcpy(c->key, key, bits / 8);
	c->bits = bits;
	if (!(c->ctl = ctx_new(c))) {
		OPENSSL_cleanse(c->key, sizeof(c->key));
		free(c);
		return emu_err(SPM_E_CRYPTO, "OpenSSL: cannot set up AES-%u-ECB", bits);
	}
	if (pthread_key_create(&c->tls, NULL)) {
		EVP_CIPHER_CTX_free(c->ctl);
		OPENSSL_cleanse(c->key, sizeof(c->key));
		free(c);
		return emu_err(-EAGAIN, "no thread-local key for the AES engine");
	}
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

/* crypto_clone -- a new engine under c's key: its own controller context
 * (a memory channel's AES engine, channel.c). */
int crypto_clone(const struct crypto *c, struct crypto **out)
{
	return crypto_new(out, c->key, c->bits);
}

/* crypto_free -- free the engine and every thread's context (no thread may use it). */
void crypto_free(struct crypto *c)
{
	if (!c)
		return;
	struct ctx_node *n = c->all;
	while (n) {
		struct ctx_node *next = n->next;
		EVP_CIPHER_CTX_free(n->ctx);
		free(n);
		n = next;
	}
	EVP_CIPHER_CTX_free(c->ctl);
	pthread_key_delete(c->tls);
	pthread_mutex_destroy(&c->lock);
	OPENSSL_cleanse(c->key, sizeof(c->key));
	free(c);
}

/* thread_ctx -- this thread's ECB context for the engine, made on first use. */
static EVP_CIPHER_CTX *thread_ctx(struct crypto *c)
{
	EVP_CIPHER_CTX *ctx = pthread_getspecific(c->tls);
	if (ctx)
		return ctx;
	ctx = ctx_new(c);
	struct ctx_node *n = malloc(sizeof(*n));
	if (!ctx || !n)
		goto fail;
	n->ctx = ctx;
	pthread_mutex_lock(&c->lock);
	n->next = c->all;
	c->all = n;
	pthread_mutex_unlock(&c->lock);
	pthread_setspecific(c->tls, ctx);
	return ctx;
fail:
	EVP_CIPHER_CTX_free(ctx);
	free(n);
	return NULL;
}

/* blocks_raw -- AES-ECB of n 16-byte seed blocks through ctx; 0, or -1
 * (no message: the callers say what failed). */
static int blocks_raw(EVP_CIPHER_CTX *ctx, const uint8_t *seeds, size_t n, uint8_t *out)
{
	if (!ctx)
		return -1;
	while (n) {
		size_t chunk = n > (1u << 20) ? (1u << 20) : n;
		/* EVP_Cipher: the cipher itself, without EVP_EncryptUpdate's
		 * buffering of partial blocks (whole blocks here, no padding);
		 * it returns the bytes done (provided ciphers) or 1 (legacy) */
		int done = EVP_Cipher(ctx, out, seeds, (unsigned)(chunk * 16));
		if (done != 1 && done != (int)(chunk * 16))
			return -1;
		n -= chunk;
		seeds += chunk * 16;
		out += chunk * 16;
	}
	return 0;
}

/* blocks_with -- blocks_raw, the failure said (SPM_E_CRYPTO). */
static int blocks_with(struct crypto *c, EVP_CIPHER_CTX *ctx, const uint8_t *seeds,
		       size_t n, uint8_t *out)
{
	if (!ctx)
		return emu_err(SPM_E_CRYPTO, "OpenSSL: cannot set up AES-%u-ECB", c->bits);
	if (blocks_raw(ctx, seeds, n, out))
		return emu_err(SPM_E_CRYPTO, "OpenSSL: AES encryption failed");
	return 0;
}

/* crypto_blocks -- AES-ECB of n 16-byte seed blocks: the raw pad function. */
int crypto_blocks(struct crypto *c, const uint8_t *seeds, size_t n, uint8_t *out)
{
	return blocks_with(c, thread_ctx(c), seeds, n, out);
}

#if !(defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
/* put_le64 -- store v little-endian. */
static inline void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}
#endif

/* line_seeds -- the 4 seeds of (line, ctr): le64(4*line + b) || le64(ctr). */
static inline void line_seeds(uint8_t s[64], uint64_t line, uint64_t ctr)
{
#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* one register holds a whole seed: block b adds b to its low half */
	__m128i v = _mm_set_epi64x((long long)ctr, (long long)(line * 4));
	for (unsigned b = 0; b < 4; b++)
		_mm_storeu_si128((__m128i *)s + b, _mm_add_epi64(v, _mm_set_epi64x(0, b)));
#else
	for (unsigned b = 0; b < 4; b++) {
		put_le64(s + b * 16, line * 4 + b);
		put_le64(s + b * 16 + 8, ctr);
	}
#endif
}

/* lines_seeds -- each of n lines' 4 seeds in its own 64 bytes of out, which
 * the engine then encrypts in place (ECB: every block alone): the pads. */
static void lines_seeds(const uint64_t *line, const uint64_t *ctr, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++)
		line_seeds(out + i * 64, line[i], ctr[i]);
}

/* line_pads_with -- the 64-byte pads of n lines through ctx, in one engine call. */
static int line_pads_with(struct crypto *c, EVP_CIPHER_CTX *ctx, const uint64_t *line,
			  const uint64_t *ctr, size_t n, uint8_t *out)
{
	lines_seeds(line, ctr, n, out);
	return n ? blocks_with(c, ctx, out, n * 4, out) : 0;
}

/* crypto_line_pads -- the 64-byte pads of n lines (any thread). */
int crypto_line_pads(struct crypto *c, const uint64_t *line, const uint64_t *ctr,
		     size_t n, uint8_t *out)
{
	return line_pads_with(c, thread_ctx(c), line, ctr, n, out);
}

/* crypto_line_pads_ctl -- the same for a caller holding the controller's
 * lock: the controller's own context. */
int crypto_line_pads_ctl(struct crypto *c, const uint64_t *line, const uint64_t *ctr,
			 size_t n, uint8_t *out)
{
	return line_pads_with(c, c->ctl, line, ctr, n, out);
}

/* crypto_line_pads_try -- crypto_line_pads_ctl without a message on failure:
 * for pads made ahead (the controller's prepads), whose failure the caller
 * recovers from by making them again when they are needed. */
int crypto_line_pads_try(struct crypto *c, const uint64_t *line, const uint64_t *ctr,
			 size_t n, uint8_t *out)
{
	lines_seeds(line, ctr, n, out);
	return n ? blocks_raw(c->ctl, out, n * 4, out) : 0;
}

/* crypto_line_pads_any_try -- crypto_line_pads_try in the calling
 * thread's own context: pads made ahead without the controller's lock
 * (memory channels, channel.c). */
int crypto_line_pads_any_try(struct crypto *c, const uint64_t *line, const uint64_t *ctr,
			     size_t n, uint8_t *out)
{
	lines_seeds(line, ctr, n, out);
	return n ? blocks_raw(thread_ctx(c), out, n * 4, out) : 0;
}

/* crypto_hkdf -- HKDF-SHA256 (RFC 5869) through OpenSSL. */
int crypto_hkdf(const uint8_t *key, size_t keylen, const uint8_t *salt,
		size_t saltlen, const char *info, uint8_t *out, size_t outlen)
{
	EVP_PKEY_CTX *p = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	int ok = p && EVP_PKEY_derive_init(p) == 1 &&
		 EVP_PKEY_CTX_set_hkdf_md(p, EVP_sha256()) == 1 &&
		 EVP_PKEY_CTX_set1_hkdf_salt(p, salt, (int)saltlen) == 1 &&
		 EVP_PKEY_CTX_set1_hkdf_key(p, key, (int)keylen) == 1 &&
		 EVP_PKEY_CTX_add1_hkdf_info(p, (const unsigned char *)info,
					     (int)strlen(info)) == 1 &&
		 EVP_PKEY_derive(p, out, &outlen) == 1;
	EVP_PKEY_CTX_free(p);
	return ok ? 0 : emu_err(SPM_E_CRYPTO, "OpenSSL: HKDF failed");
}
