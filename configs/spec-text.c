/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "configs/catalog.h"
#include "configs/spec-text.h"
#include "util/io.h"

void spec_text_scalar(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

void spec_text_list(FILE *f, char *const *l) {
        fputc('[', f);
        for (size_t i = 0; l && l[i]; i++) {
                if (i > 0)
                        fputs(", ", f);
                spec_text_scalar(f, l[i]);
        }
        fputc(']', f);
}

/* The length of the name between braces at s (just after '{') when it is one of names, else 0. */
static size_t named_reference(const char *s, char *const *names) {
        size_t n = strcspn(s, "}");
        if (!s[n])
                return 0;
        for (size_t i = 0; names && names[i]; i++)
                if (strcspn(names[i], "=") == n && strncmp(names[i], s, n) == 0)
                        return n;
        return 0;
}

void spec_text_template(FILE *f, const char *s, char *const *names) {
        char *text = NULL;
        size_t size = 0;
        FILE *t = open_memstream(&text, &size);
        if (!t)
                return;
        for (const char *p = s; *p; p++) {
                size_t n;
                if (*p == '{' && (n = named_reference(p + 1, names)) > 0) {
                        fprintf(t, "{%.*s}", (int) n, p + 1);
                        p += n + 1;
                } else if (*p == '{' || *p == '}')
                        fprintf(t, "%c%c", *p, *p);
                else
                        fputc(*p, t);
        }
        if (memstream_text(t, &text))
                spec_text_scalar(f, text);
        free(text);
}

char *spec_text_variant_name(const char *preload) {
        const char *base = basename(preload);
        char *name = strndup(base, strcspn(base, "."));
        /* A catalog allocator's file whose name does not say which (libclang_rt for scudo) is named
         * as the catalog names it; libjemalloc stays libjemalloc, apart from the name jemalloc. */
        const CatalogEntry *e = strchr(preload, '/') ? catalog_find_file(preload) : NULL;
        if (name && e && !strstr(name, e->name)) {
                free(name);
                return strdup(e->name);
        }
        return name;
}

bool spec_text_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '-' || c == '.';
}

void spec_text_name(char *buf, size_t size, const char *prefix, const char *src, size_t len) {
        size_t k = (size_t) snprintf(buf, size, "%s", prefix);
        for (size_t i = 0; i < len && k + 1 < size && k < 64; i++)
                buf[k++] = spec_text_name_char(src[i]) ? src[i] : '_';
        buf[k] = 0;
}
