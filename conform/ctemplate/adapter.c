/*
 * A minimal packed-weight cache in C behind the conformance protocol of
 * docs/conform.md (protocol 2, or 1 to a driver that speaks only 1), as
 * a template for wrapping a C or C++
 * cache: replace the functions under "the cache" with calls into yours and
 * keep the protocol loop.
 *
 *   cc -O2 -o adapter adapter.c && simrun conform --exec ./adapter
 *
 * The cache: one file; a 32-byte header at offset 0 names the committed
 * index ([magic "XPWCCTPL"][index offset u64][index length u64][FNV-1a of
 * the index u64], little-endian); reservations append to the end of the
 * file; a commit appends the index, syncs, then rewrites the header and
 * syncs again. Entries are keyed by weight, bias, seed, fingerprint and
 * source (capability "seeds"), and each entry's data carries an FNV-1a
 * checksum checked at its first hand-out by an instance (capability
 * "checksums"). It takes no lock, never compacts and its header write is
 * not safe against power loss, so it claims neither "locking",
 * "compaction", "crash-safe-commit" nor a format the driver can read.
 *
 * One request per line on stdin, one response per line on stdout; errors
 * and logs go to stderr only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- JSON */

/* The requests are flat objects whose only nested value is "key"; this
 * reader keeps what the protocol sends and skips anything else. */
typedef struct {
	char weight[256], bias[256];
	uint64_t seed, fingerprint, source;
} key_t_;

typedef struct {
	uint64_t id, size, reservation, handle, protocol;
	char op[32], path[4096], program[256], weight[256];
	int has_key;
	key_t_ key;
	unsigned char *data;
	size_t data_len;
} request;

static const char *skip_ws(const char *p) {
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
	return p;
}

/* parse_string reads a JSON string at p into out (at most cap-1 bytes,
 * \u escapes below 0x80 only) and returns the position after it. */
static const char *parse_string(const char *p, char *out, size_t cap) {
	size_t n = 0;
	if (*p != '"') return NULL;
	for (p++; *p && *p != '"'; p++) {
		char c = *p;
		if (c == '\\') {
			p++;
			switch (*p) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned v = 0;
				if (sscanf(p + 1, "%4x", &v) != 1 || v >= 0x80) return NULL;
				c = (char)v;
				p += 4;
				break;
			}
			case 0: return NULL;
			default: c = *p;
			}
		}
		if (out && n + 1 < cap) out[n++] = c;
	}
	if (*p != '"') return NULL;
	if (out) out[n < cap ? n : cap - 1] = 0;
	return p + 1;
}

static const char *parse_uint(const char *p, uint64_t *v) {
	char *end;
	errno = 0;
	unsigned long long x = strtoull(p, &end, 10);
	if (end == p || errno) return NULL;
	*v = x;
	return end;
}

/* skip_value skips any JSON value. */
static const char *skip_value(const char *p) {
	p = skip_ws(p);
	if (*p == '"') return parse_string(p, NULL, 0);
	if (*p == '{' || *p == '[') {
		int depth = 0;
		for (; *p; p++) {
			if (*p == '"') {
				p = parse_string(p, NULL, 0);
				if (!p) return NULL;
				p--;
			} else if (*p == '{' || *p == '[') {
				depth++;
			} else if (*p == '}' || *p == ']') {
				if (--depth == 0) return p + 1;
			}
		}
		return NULL;
	}
	while (*p && *p != ',' && *p != '}' && *p != ']') p++;
	return p;
}

static int b64val(int c) {
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

/* parse_base64 decodes a JSON string of standard base64 into a new buffer. */
static const char *parse_base64(const char *p, unsigned char **out, size_t *len) {
	const char *end = strchr(p + 1, '"');
	if (*p != '"' || !end) return NULL;
	size_t n = (size_t)(end - p - 1);
	unsigned char *b = malloc(n / 4 * 3 + 3);
	size_t k = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (const char *q = p + 1; q < end; q++) {
		if (*q == '=') break;
		int v = b64val(*q);
		if (v < 0) { free(b); return NULL; }
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			b[k++] = (unsigned char)(acc >> bits);
		}
	}
	*out = b;
	*len = k;
	return end + 1;
}

/* parse_object calls field(name, p) for each member; field returns the
 * position after the value, or NULL to skip it generically. */
typedef const char *(*field_fn)(void *ctx, const char *name, const char *p);

static const char *parse_object(const char *p, void *ctx, field_fn field) {
	p = skip_ws(p);
	if (*p != '{') return NULL;
	p = skip_ws(p + 1);
	if (*p == '}') return p + 1;
	for (;;) {
		char name[64];
		p = parse_string(skip_ws(p), name, sizeof name);
		if (!p) return NULL;
		p = skip_ws(p);
		if (*p != ':') return NULL;
		p = skip_ws(p + 1);
		const char *q = field(ctx, name, p);
		if (!q) q = skip_value(p);
		if (!q) return NULL;
		p = skip_ws(q);
		if (*p == ',') { p++; continue; }
		if (*p == '}') return p + 1;
		return NULL;
	}
}

static const char *key_field(void *ctx, const char *name, const char *p) {
	key_t_ *k = ctx;
	if (!strcmp(name, "weight")) return parse_string(p, k->weight, sizeof k->weight);
	if (!strcmp(name, "bias")) return parse_string(p, k->bias, sizeof k->bias);
	if (!strcmp(name, "seed")) return parse_uint(p, &k->seed);
	if (!strcmp(name, "fingerprint")) return parse_uint(p, &k->fingerprint);
	if (!strcmp(name, "source")) return parse_uint(p, &k->source);
	return NULL;
}

static const char *request_field(void *ctx, const char *name, const char *p) {
	request *r = ctx;
	if (!strcmp(name, "id")) return parse_uint(p, &r->id);
	if (!strcmp(name, "op")) return parse_string(p, r->op, sizeof r->op);
	if (!strcmp(name, "protocol")) return parse_uint(p, &r->protocol);
	if (!strcmp(name, "path")) return parse_string(p, r->path, sizeof r->path);
	if (!strcmp(name, "program")) return parse_string(p, r->program, sizeof r->program);
	if (!strcmp(name, "weight")) return parse_string(p, r->weight, sizeof r->weight);
	if (!strcmp(name, "size")) return parse_uint(p, &r->size);
	if (!strcmp(name, "reservation")) return parse_uint(p, &r->reservation);
	if (!strcmp(name, "handle")) return parse_uint(p, &r->handle);
	if (!strcmp(name, "data")) return parse_base64(p, &r->data, &r->data_len);
	if (!strcmp(name, "key")) {
		r->has_key = 1;
		return parse_object(p, &r->key, key_field);
	}
	return NULL;
}

/* --------------------------------------------------------------- output */

static void put_string(const char *s) {
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') printf("\\%c", c);
		else if (c < 0x20) printf("\\u%04x", c);
		else putchar(c);
	}
	putchar('"');
}

static void put_base64(const unsigned char *b, size_t n) {
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	putchar('"');
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)b[i] << 16;
		if (i + 1 < n) v |= (uint32_t)b[i + 1] << 8;
		if (i + 2 < n) v |= b[i + 2];
		putchar(tab[v >> 18 & 63]);
		putchar(tab[v >> 12 & 63]);
		putchar(i + 1 < n ? tab[v >> 6 & 63] : '=');
		putchar(i + 2 < n ? tab[v & 63] : '=');
	}
	putchar('"');
}

/* ------------------------------------------------------------ the cache */

#define HEADER 32
static const char magic[8] = {'X', 'P', 'W', 'C', 'C', 'T', 'P', 'L'};

typedef struct {
	key_t_ key;
	uint64_t off, size, sum;
	int live;      /* in this instance's view */
	int verified;  /* checked (or packed) by this instance */
	int committed; /* listed by the index this instance last committed or loaded */
} entry;

typedef struct {
	uint64_t off, size;
} reservation;

static struct {
	int open, fd;
	char path[4096];
	int loaded;  /* the first init loaded (or found no) index */
	int dirty;   /* something to commit */
	int finalized;
	entry *ents;
	size_t n, cap;
	reservation *res;
	size_t nres, capres;
	char load[16], load_error[256];
} c;

static uint64_t fnv(const unsigned char *b, size_t n) {
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static void put64(unsigned char *b, uint64_t v) { for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> 8 * i); }
static uint64_t get64(const unsigned char *b) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | b[i]; return v; }
static void put32(unsigned char *b, uint32_t v) { for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> 8 * i); }
static uint32_t get32(const unsigned char *b) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | b[i]; return v; }

static int same_key(const key_t_ *a, const key_t_ *b) {
	return !strcmp(a->weight, b->weight) && !strcmp(a->bias, b->bias) && a->seed == b->seed &&
	       a->fingerprint == b->fingerprint && a->source == b->source;
}

static entry *by_weight(const char *w) {
	for (size_t i = 0; i < c.n; i++)
		if (c.ents[i].live && !strcmp(c.ents[i].key.weight, w)) return &c.ents[i];
	return NULL;
}

static entry *add_entry(void) {
	if (c.n == c.cap) {
		c.cap = c.cap ? 2 * c.cap : 16;
		c.ents = realloc(c.ents, c.cap * sizeof *c.ents);
	}
	memset(&c.ents[c.n], 0, sizeof *c.ents);
	return &c.ents[c.n++];
}

/* file_open opens (creating) the cache file. */
static int file_open(void) {
	if (c.fd >= 0) return 0;
	c.fd = open(c.path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	return c.fd < 0 ? -1 : 0;
}

/* load reads the committed index; it sets c.load to missing, ok or
 * rejected (docs/conform.md, init) and adds the entries the view lacks. */
static void load(void) {
	unsigned char h[HEADER];
	struct stat st;
	c.load_error[0] = 0;
	int fd = open(c.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		strcpy(c.load, errno == ENOENT ? "missing" : "failed");
		if (errno != ENOENT) snprintf(c.load_error, sizeof c.load_error, "open: %s", strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || st.st_size < HEADER || pread(fd, h, HEADER, 0) != HEADER) {
		/* a file with no header yet: reserved, never committed */
		strcpy(c.load, st.st_size == 0 ? "missing" : "rejected");
		if (st.st_size != 0) strcpy(c.load_error, "file too small for a header");
		close(fd);
		return;
	}
	uint64_t off = get64(h + 8), len = get64(h + 16), sum = get64(h + 24);
	static const unsigned char zero[HEADER];
	if (!memcmp(h, zero, HEADER)) {
		strcpy(c.load, "missing"); /* no commit yet */
		close(fd);
		return;
	}
	if (memcmp(h, magic, 8) || off < HEADER || len > (uint64_t)st.st_size || off > (uint64_t)st.st_size - len) {
		strcpy(c.load, "rejected");
		strcpy(c.load_error, "bad header");
		close(fd);
		return;
	}
	unsigned char *idx = malloc(len ? len : 1);
	if (pread(fd, idx, len, (off_t)off) != (ssize_t)len || fnv(idx, len) != sum) {
		strcpy(c.load, "rejected");
		strcpy(c.load_error, "index checksum mismatch");
		free(idx);
		close(fd);
		return;
	}
	close(fd);
	/* Forget what the file no longer lists; keep this instance's own
	 * entries (and their verification) that it still lists. */
	for (size_t i = 0; i < c.n; i++) c.ents[i].committed = 0;
	for (size_t p = 0; p < len;) {
		entry e;
		memset(&e, 0, sizeof e);
		for (int s = 0; s < 2; s++) {
			if (len - p < 4) goto bad;
			uint32_t n = get32(idx + p);
			p += 4;
			if (n >= sizeof e.key.weight || len - p < n) goto bad;
			memcpy(s ? e.key.bias : e.key.weight, idx + p, n);
			p += n;
		}
		if (len - p < 8 * 6) goto bad;
		e.key.seed = get64(idx + p);
		e.key.fingerprint = get64(idx + p + 8);
		e.key.source = get64(idx + p + 16);
		e.off = get64(idx + p + 24);
		e.size = get64(idx + p + 32);
		e.sum = get64(idx + p + 40);
		p += 48;
		if (e.off > (uint64_t)st.st_size || e.size > (uint64_t)st.st_size - e.off) goto bad;
		entry *have = by_weight(e.key.weight);
		if (have && same_key(&have->key, &e.key) && have->off == e.off) {
			have->committed = 1;
			continue;
		}
		if (have) have->live = 0; /* another packing replaced it */
		entry *n = add_entry();
		*n = e;
		n->live = n->committed = 1;
	}
	free(idx);
	strcpy(c.load, "ok");
	return;
bad:
	free(idx);
	strcpy(c.load, "rejected");
	strcpy(c.load_error, "index entry out of bounds");
}

/* commit writes the index of the live entries and points the header at it. */
static int commit(void) {
	if (!c.dirty) return 0;
	if (file_open() < 0) return -1;
	size_t cap = 64, len = 0;
	unsigned char *idx = malloc(cap);
	for (size_t i = 0; i < c.n; i++) {
		entry *e = &c.ents[i];
		if (!e->live) continue;
		size_t wl = strlen(e->key.weight), bl = strlen(e->key.bias), need = 8 + wl + bl + 48;
		while (len + need > cap) idx = realloc(idx, cap *= 2);
		put32(idx + len, (uint32_t)wl);
		memcpy(idx + len + 4, e->key.weight, wl);
		put32(idx + len + 4 + wl, (uint32_t)bl);
		memcpy(idx + len + 8 + wl, e->key.bias, bl);
		unsigned char *q = idx + len + 8 + wl + bl;
		put64(q, e->key.seed);
		put64(q + 8, e->key.fingerprint);
		put64(q + 16, e->key.source);
		put64(q + 24, e->off);
		put64(q + 32, e->size);
		put64(q + 40, e->sum);
		len += need;
	}
	struct stat st;
	int ok = fstat(c.fd, &st) == 0;
	uint64_t off = ok && st.st_size >= HEADER ? (uint64_t)st.st_size : HEADER;
	unsigned char h[HEADER];
	memcpy(h, magic, 8);
	put64(h + 8, off);
	put64(h + 16, len);
	put64(h + 24, fnv(idx, len));
	ok = ok && pwrite(c.fd, idx, len, (off_t)off) == (ssize_t)len && fsync(c.fd) == 0 &&
	     pwrite(c.fd, h, HEADER, 0) == HEADER && fsync(c.fd) == 0;
	free(idx);
	if (!ok) return -1;
	for (size_t i = 0; i < c.n; i++) c.ents[i].committed = c.ents[i].live;
	c.dirty = 0;
	return 0;
}

/* ------------------------------------------------------------- requests */

static void fail(uint64_t id, const char *msg) {
	printf("{\"id\":%llu,\"ok\":false,\"error\":", (unsigned long long)id);
	put_string(msg);
	printf("}\n");
}

/* proto is the version of this session: the driver's, up to 2. */
static unsigned proto = 1;

static int handle(request *r) {
	unsigned long long id = r->id;
	if (!strcmp(r->op, "hello")) {
		proto = r->protocol >= 2 ? 2 : 1;
		printf("{\"id\":%llu,\"ok\":true,\"protocol\":%u,\"name\":\"c-template\",\"capabilities\":[\"seeds\",\"checksums\"]}\n", id, proto);
		return 0;
	}
	if (!strcmp(r->op, "set_path")) {
		if (c.open) { fail(id, "set_path: the instance is open"); return 0; }
		if (!r->path[0]) { fail(id, "set_path: this template needs a path"); return 0; }
		c.open = 1;
		c.fd = -1;
		snprintf(c.path, sizeof c.path, "%s", r->path);
		printf("{\"id\":%llu,\"ok\":true}\n", id);
		return 0;
	}
	if (!c.open) { fail(id, "no instance (set_path first)"); return 0; }
	if (!strcmp(r->op, "init")) {
		load();
		c.finalized = 0;
		printf("{\"id\":%llu,\"ok\":true,\"load\":\"%s\"", id, c.load);
		if (c.load_error[0]) { printf(",\"load_error\":"); put_string(c.load_error); }
		printf("}\n");
	} else if (!strcmp(r->op, "lookup")) {
		entry *e = by_weight(r->key.weight);
		int checked = 0;
		if (e && same_key(&e->key, &r->key) && !e->verified) {
			/* first hand-out by this instance: check the bytes */
			unsigned char *b = malloc(e->size ? e->size : 1);
			checked = 1;
			e->verified = pread(c.fd < 0 ? (file_open(), c.fd) : c.fd, b, e->size, (off_t)e->off) == (ssize_t)e->size &&
			              fnv(b, e->size) == e->sum;
			free(b);
			if (!e->verified) {
				e->live = 0; /* corrupt: dropped, re-packed on the next insert */
				c.dirty |= e->committed;
				e = NULL;
			}
		}
		if (e && same_key(&e->key, &r->key))
			printf("{\"id\":%llu,\"ok\":true,\"hit\":true,\"handle\":%zu%s}\n", id, (size_t)(e - c.ents) + 1, checked ? ",\"checked\":true" : "");
		else
			printf("{\"id\":%llu,\"ok\":true%s}\n", id, checked ? ",\"checked\":true" : "");
	} else if (!strcmp(r->op, "reserve")) {
		struct stat st;
		if (file_open() < 0 || fstat(c.fd, &st) < 0) { fail(id, strerror(errno)); return 0; }
		uint64_t off = st.st_size < HEADER ? HEADER : (uint64_t)st.st_size;
		if (ftruncate(c.fd, (off_t)(off + r->size)) < 0) { fail(id, strerror(errno)); return 0; }
		if (c.nres == c.capres) {
			c.capres = c.capres ? 2 * c.capres : 16;
			c.res = realloc(c.res, c.capres * sizeof *c.res);
		}
		c.res[c.nres].off = off;
		c.res[c.nres].size = r->size;
		printf("{\"id\":%llu,\"ok\":true,\"reservation\":%zu}\n", id, ++c.nres);
	} else if (!strcmp(r->op, "insert")) {
		if (r->reservation == 0 || r->reservation > c.nres || r->data_len > c.res[r->reservation - 1].size) {
			fail(id, "insert: no such reservation, or more bytes than reserved");
			return 0;
		}
		reservation *v = &c.res[r->reservation - 1];
		if (pwrite(c.fd, r->data, r->data_len, (off_t)v->off) != (ssize_t)r->data_len) { fail(id, strerror(errno)); return 0; }
		entry *old = by_weight(r->key.weight);
		if (old) old->live = 0;
		entry *e = add_entry();
		e->key = r->key;
		e->off = v->off;
		e->size = r->data_len;
		e->sum = fnv(r->data, r->data_len);
		e->live = e->verified = 1;
		c.dirty = 1;
		printf("{\"id\":%llu,\"ok\":true,\"handle\":%zu}\n", id, c.n);
	} else if (!strcmp(r->op, "read_bytes") || (proto >= 2 && !strcmp(r->op, "compute"))) {
		/* compute (protocol 2) is an inference's read: this cache checked
		 * the bytes at their first hand-out, so it reads as read_bytes. */
		if (r->handle == 0 || r->handle > c.n) { fail(id, "stale handle"); return 0; }
		entry *e = &c.ents[r->handle - 1];
		unsigned char *b = malloc(e->size ? e->size : 1);
		if (pread(c.fd, b, e->size, (off_t)e->off) != (ssize_t)e->size) { free(b); fail(id, "read failed"); return 0; }
		printf("{\"id\":%llu,\"ok\":true,\"data\":", id);
		put_base64(b, e->size);
		printf("}\n");
		free(b);
	} else if (!strcmp(r->op, "is_finalized")) {
		printf("{\"id\":%llu,\"ok\":true%s}\n", id, c.finalized ? ",\"finalized\":true" : "");
	} else if (!strcmp(r->op, "finalize") || !strcmp(r->op, "save")) {
		if (commit() < 0) {
			/* recorded, as the protocol lets a save report it */
			printf("{\"id\":%llu,\"ok\":false,\"error\":\"commit failed\",\"commit_error\":\"commit failed\"}\n", id);
			return 0;
		}
		if (!strcmp(r->op, "finalize")) c.finalized = 1;
		printf("{\"id\":%llu,\"ok\":true}\n", id);
	} else if (!strcmp(r->op, "invalidate")) {
		entry *e = by_weight(r->weight);
		if (e) {
			e->live = 0;
			c.dirty |= e->committed;
		}
		printf("{\"id\":%llu,\"ok\":true}\n", id);
	} else if (!strcmp(r->op, "delete_program")) {
		printf("{\"id\":%llu,\"ok\":true}\n", id);
	} else if (!strcmp(r->op, "destroy")) {
		if (c.fd >= 0) close(c.fd);
		printf("{\"id\":%llu,\"ok\":true}\n", id);
		return 1;
	} else if (proto >= 2) {
		/* What this cache does not have (stats, a request of a later
		 * version): the run ends there, not claimed from that step. */
		printf("{\"id\":%llu,\"ok\":false,\"unsupported\":true,\"error\":", id);
		put_string(r->op);
		printf("}\n");
	} else {
		fail(id, "unknown request");
	}
	return 0;
}

int main(void) {
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	c.fd = -1;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		request r;
		memset(&r, 0, sizeof r);
		int done = 0;
		if (!parse_object(line, &r, request_field)) {
			fail(r.id, "bad request");
		} else {
			done = handle(&r);
		}
		free(r.data);
		fflush(stdout);
		if (done) break;
	}
	free(line);
	return 0;
}
