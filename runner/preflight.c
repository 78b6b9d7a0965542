/* SPDX-License-Identifier: MIT */
/*
 * ELF reading for pre-flight. Files are mapped read-only and every offset is bounds-checked
 * against the file size before use: the files are the user's, not ours. Only 64-bit ELF of the
 * host's byte order is inspected; anything else passes (the probe still checks at run time).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "runner/preflight.h"
#include "util/cleanup.h"

typedef struct Image {
        const unsigned char *data;
        size_t size;
} Image;

static void image_done(Image *m) {
        if (m->data)
                munmap((void *) m->data, m->size);
}

static int image_open(const char *path, Image *ret, struct stat *ret_st) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, ret_st) < 0)
                return negative_errno();
        *ret = (Image){ .size = (size_t) ret_st->st_size };
        if (ret->size == 0)
                return 0;
        void *p = mmap(NULL, ret->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED)
                return negative_errno();
        ret->data = p;
        return 0;
}

static bool in_bounds(const Image *m, uint64_t offset, uint64_t size) {
        return offset <= m->size && size <= m->size - offset;
}

/* Whether a table of 64-bit ELF structures (headers, symbols) can be read at offset: in the
 * file, and aligned as the ELF specification requires (a misaligned one is malformed, and
 * reading it through a typed pointer would be undefined). */
static bool table_in_bounds(const Image *m, uint64_t offset, uint64_t size) {
        return offset % 8 == 0 && in_bounds(m, offset, size);
}

static const Elf64_Ehdr *elf_header(const Image *m) {
        if (!in_bounds(m, 0, sizeof(Elf64_Ehdr)))
                return NULL;
        const Elf64_Ehdr *h = (const Elf64_Ehdr *) m->data;
        if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64 ||
            h->e_ident[EI_DATA] != ELFDATA2LSB)
                return NULL;
        return h;
}

static bool has_interpreter(const Image *m, const Elf64_Ehdr *h) {
        if (h->e_phentsize != sizeof(Elf64_Phdr) ||
            !table_in_bounds(m, h->e_phoff, (uint64_t) h->e_phnum * sizeof(Elf64_Phdr)))
                return true; /* unreadable: do not accuse it */
        const Elf64_Phdr *ph = (const Elf64_Phdr *) (m->data + h->e_phoff);
        for (unsigned i = 0; i < h->e_phnum; i++)
                if (ph[i].p_type == PT_INTERP)
                        return true;
        return false;
}

/* Whether the symbol tables (static and dynamic) define `name` as a function. */
static bool defines_function(const Image *m, const Elf64_Ehdr *h, const char *name) {
        if (h->e_shentsize != sizeof(Elf64_Shdr) ||
            !table_in_bounds(m, h->e_shoff, (uint64_t) h->e_shnum * sizeof(Elf64_Shdr)))
                return false;
        const Elf64_Shdr *sh = (const Elf64_Shdr *) (m->data + h->e_shoff);
        for (unsigned i = 0; i < h->e_shnum; i++) {
                if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
                        continue;
                if (sh[i].sh_link >= h->e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym) ||
                    !table_in_bounds(m, sh[i].sh_offset, sh[i].sh_size))
                        continue;
                const Elf64_Shdr *strtab = &sh[sh[i].sh_link];
                if (!in_bounds(m, strtab->sh_offset, strtab->sh_size))
                        continue;
                const char *strings = (const char *) m->data + strtab->sh_offset;
                const Elf64_Sym *sym = (const Elf64_Sym *) (m->data + sh[i].sh_offset);
                size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
                size_t len = strlen(name);
                for (size_t k = 0; k < n; k++) {
                        if (sym[k].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
                            sym[k].st_name >= strtab->sh_size || strtab->sh_size - sym[k].st_name <= len)
                                continue;
                        if (memcmp(strings + sym[k].st_name, name, len + 1) == 0)
                                return true;
                }
        }
        return false;
}

static int reason(char **ret, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reason(char **ret, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(ret, fmt, ap);
        va_end(ap);
        return r < 0 ? -ENOMEM : 1;
}

/* "#!/usr/bin/env python3" -> the interpreter's path ("/usr/bin/env" here: what the kernel
 * executes, and what the loader preloads into). */
static char *shebang(const Image *m) {
        if (!in_bounds(m, 0, 3) || m->data[0] != '#' || m->data[1] != '!')
                return NULL;
        size_t i = 2, end;
        while (i < m->size && (m->data[i] == ' ' || m->data[i] == '\t'))
                i++;
        for (end = i; end < m->size && end - i < 4096 && m->data[end] != ' ' && m->data[end] != '\t' &&
                      m->data[end] != '\n';
             end++)
                ;
        return end > i ? strndup((const char *) m->data + i, end - i) : NULL;
}

static int check_program(const char *exe, int depth, char **ret_reason) {
        _cleanup_(image_done) Image m = {};
        struct stat st;
        int r = image_open(exe, &m, &st);
        if (r < 0)
                return r;
        if (st.st_mode & (S_ISUID | S_ISGID))
                return reason(
                        ret_reason,
                        "%s is set%s: the loader runs it in secure-execution mode and ignores LD_PRELOAD",
                        exe, st.st_mode & S_ISUID ? "uid" : "gid");
        if (getxattr(exe, "security.capability", NULL, 0) > 0)
                return reason(ret_reason,
                              "%s has file capabilities: the loader runs it in secure-execution mode and "
                              "ignores LD_PRELOAD",
                              exe);
        _cleanup_free_ char *interpreter = shebang(&m);
        if (interpreter)
                return depth > 0 ? 0 : check_program(interpreter, depth + 1, ret_reason);
        const Elf64_Ehdr *h = elf_header(&m);
        if (!h)
                return 0;
        if (!has_interpreter(&m, h))
                return reason(ret_reason, "%s is statically linked: nothing can be preloaded into it", exe);
        if (defines_function(&m, h, "malloc"))
                return reason(ret_reason,
                              "%s defines its own malloc: its calls never reach a preloaded allocator", exe);
        return 0;
}

static int check_library(const char *library, char **ret_reason) {
        _cleanup_(image_done) Image m = {};
        struct stat st;
        int r = image_open(library, &m, &st);
        if (r < 0)
                return r;
        const Elf64_Ehdr *h = elf_header(&m);
        if (!h)
                return reason(ret_reason, "%s is not a 64-bit ELF shared object", library);
        static const char *const core[] = { "malloc", "free", "calloc", "realloc" };
        for (size_t i = 0; i < ELEMENTSOF(core); i++)
                if (!defines_function(&m, h, core[i]))
                        return reason(ret_reason,
                                      "%s does not define %s: it cannot replace the malloc family", library,
                                      core[i]);
        return 0;
}

int preflight_check(const char *exe, const char *library, char **ret_reason) {
        int r = check_program(exe, 0, ret_reason);
        if (r != 0 || !library)
                return r;
        return check_library(library, ret_reason);
}
