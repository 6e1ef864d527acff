// SPDX-License-Identifier: GPL-2.0
/*
 * jsoncheck - is a file one well-formed JSON value?  (The guests have no
 * JSON parser; tests of the tools' --json output use this.)
 *
 *   jsoncheck [FILE]     exit 0 if FILE (default stdin) holds exactly one
 *                        JSON value (RFC 8259), 1 otherwise, with the
 *                        offset of the first error on stderr
 *
 * A recursive-descent parser; nesting is limited to 64 levels.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *p, *start;

static void ws(void)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
}

static int value(int depth);

static int string(void)
{
	if (*p++ != '"')
		return -1;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return -1;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return -1;
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p) || !*p) {
				return -1;
			}
		}
		p++;
	}
	p++;
	return 0;
}

static int number(void)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (isdigit((unsigned char)*p))
			p++;
	else
		return -1;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	return 0;
}

static int container(int depth, char close)
{
	p++;
	ws();
	if (*p == close) {
		p++;
		return 0;
	}
	for (;;) {
		ws();
		if (close == '}') {
			if (string())
				return -1;
			ws();
			if (*p++ != ':')
				return -1;
		}
		if (value(depth + 1))
			return -1;
		ws();
		if (*p == close) {
			p++;
			return 0;
		}
		if (*p++ != ',')
			return -1;
	}
}

static int value(int depth)
{
	if (depth > 64)
		return -1;
	ws();
	switch (*p) {
	case '{':
		return container(depth, '}');
	case '[':
		return container(depth, ']');
	case '"':
		return string();
	case 't':
		return strncmp(p, "true", 4) ? -1 : (p += 4, 0);
	case 'f':
		return strncmp(p, "false", 5) ? -1 : (p += 5, 0);
	case 'n':
		return strncmp(p, "null", 4) ? -1 : (p += 4, 0);
	default:
		return number();
	}
}

int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap + 1);

	if (!f || !buf) {
		perror("jsoncheck");
		return 1;
	}
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *b = realloc(buf, cap * 2 + 1);

			if (!b)
				return 1;
			buf = b;
			cap *= 2;
		}
	}
	buf[len] = 0;
	if (strlen(buf) != len) {
		fprintf(stderr, "jsoncheck: NUL byte in input\n");
		return 1;
	}
	start = p = buf;
	if (value(0) == 0) {
		ws();
		if (!*p)
			return 0;
	}
	fprintf(stderr, "jsoncheck: not valid JSON at byte %ld\n", (long)(p - start));
	return 1;
}
