/* SPDX-License-Identifier: MIT */
/*
 * Decoding never trusts the child: the report is copied out of the mapping first (the child is
 * gone by then, but a grandchild could still write), sizes and magic are checked, and every
 * string is re-terminated.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runner/output.h"
#include "runner/probe-report.h"
#include "util/cleanup.h"

int probe_report_memfd(void) {
        int fd = output_memfd("alloclab-probe");
        if (fd < 0)
                return fd;
        if (ftruncate(fd, sizeof(ProbeReport)) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        return fd;
}

#define TERMINATE(a) ((a)[sizeof(a) - 1] = 0)

int probe_report_decode(int fd, ProbeResult *ret) {
        static ProbeReport copy; /* 22 KiB: static rather than on the stack; single-threaded */
        void *m = mmap(NULL, sizeof(ProbeReport), PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
                return negative_errno();
        memcpy(&copy, m, sizeof(copy));
        munmap(m, sizeof(ProbeReport));

        *ret = (ProbeResult){};
        if (copy.magic == 0 && copy.state == 0)
                return 0;
        if (copy.magic != PROBE_REPORT_MAGIC || copy.version != PROBE_REPORT_VERSION ||
            copy.size != sizeof(ProbeReport))
                return -EBADMSG;

        ret->loaded = copy.state & PROBE_STATE_LOADED;
        ret->exited = copy.state & PROBE_STATE_EXITED;
        ret->forward_failed = copy.state & PROBE_STATE_FORWARD_FAILED;
        memcpy(ret->effective_path, copy.effective_path, sizeof(ret->effective_path));
        TERMINATE(ret->effective_path);
        ret->effective_family = copy.effective_family;
        memcpy(ret->effective_prefix, copy.effective_prefix, sizeof(ret->effective_prefix));
        TERMINATE(ret->effective_prefix);
        memcpy(ret->allocator_version, copy.allocator_version, sizeof(ret->allocator_version));
        TERMINATE(ret->allocator_version);
        ret->n_options = copy.n_options < PROBE_MAX_OPTIONS ? copy.n_options : PROBE_MAX_OPTIONS;
        for (uint32_t i = 0; i < ret->n_options; i++) {
                ret->options[i] = copy.options[i];
                TERMINATE(ret->options[i].name);
                TERMINATE(ret->options[i].value);
        }
        ret->n_libraries = copy.n_libraries < PROBE_MAX_LIBRARIES ? copy.n_libraries : PROBE_MAX_LIBRARIES;
        for (uint32_t i = 0; i < ret->n_libraries; i++) {
                ret->libraries[i] = copy.libraries[i];
                TERMINATE(ret->libraries[i].path);
                TERMINATE(ret->libraries[i].prefix);
        }
        memcpy(ret->forward_library, copy.forward_library, sizeof(ret->forward_library));
        TERMINATE(ret->forward_library);
        memcpy(ret->error, copy.error, sizeof(ret->error));
        TERMINATE(ret->error);

        uint32_t slots = copy.n_slots < PROBE_MAX_SLOTS ? copy.n_slots : PROBE_MAX_SLOTS;
        for (uint32_t s = 0; s < slots; s++) {
                for (unsigned f = 0; f < _PROBE_FUNCTION_MAX; f++)
                        ret->calls[f] += copy.slots[s].calls[f];
                ret->bytes_requested += copy.slots[s].bytes_requested;
                ret->live_bytes += copy.slots[s].live_bytes;
        }
        ret->threads = copy.n_slots;
        ret->peak_live_bytes =
                copy.peak_live_bytes > ret->live_bytes ? copy.peak_live_bytes : ret->live_bytes;
        ret->bootstrap_bytes = copy.bootstrap_bytes;
        return 0;
}

const char *probe_family_name(uint32_t families) {
        static const struct {
                uint32_t bit;
                const char *name;
        } names[] = {
                { PROBE_FAMILY_JEMALLOC, "jemalloc" }, { PROBE_FAMILY_MIMALLOC, "mimalloc" },
                { PROBE_FAMILY_TCMALLOC, "tcmalloc" }, { PROBE_FAMILY_TBBMALLOC, "tbbmalloc" },
                { PROBE_FAMILY_GLIBC, "glibc" },
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (families & names[i].bit)
                        return names[i].name;
        return "none";
}

const char *probe_function_name(ProbeFunction f) {
        static const char *const names[_PROBE_FUNCTION_MAX] = {
                "malloc",        "free",     "calloc", "realloc", "reallocarray",       "posix_memalign",
                "aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size",
        };
        return (unsigned) f < _PROBE_FUNCTION_MAX ? names[f] : "?";
}

unsigned probe_allocator_copies(const ProbeResult *r) {
        unsigned n = 0;
        for (uint32_t i = 0; i < r->n_libraries; i++)
                n += (r->libraries[i].families & ~(uint32_t) PROBE_FAMILY_GLIBC) != 0;
        return n;
}
