/* SPDX-License-Identifier: MIT */
#include "configs/spec-text.h"

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
