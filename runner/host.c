/* SPDX-License-Identifier: MIT */
/*
 * Host facts, read once per run (never while a child runs).
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runner/host.h"
#include "util/cleanup.h"

static char *first_line(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *line = NULL;
        size_t cap = 0;
        if (getline(&line, &cap, f) < 0) {
                free(line);
                return NULL;
        }
        line[strcspn(line, "\n")] = 0;
        return line;
}

static char *cpu_model(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/cpuinfo", "re");
        if (!f)
                return NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) > 0) {
                if (strncmp(line, "model name", 10) != 0)
                        continue;
                char *colon = strchr(line, ':');
                if (!colon)
                        break;
                colon += 1 + strspn(colon + 1, " \t");
                colon[strcspn(colon, "\n")] = 0;
                return strdup(colon);
        }
        return NULL;
}

const char *const host_fact_names[_HOST_FACT_MAX] = {
        [HOST_MACHINE_ID] = "machine_id",
        [HOST_KERNEL_CMDLINE] = "kernel_cmdline",
        [HOST_CORES] = "cores",
        [HOST_NUMA_NODES] = "numa_nodes",
        [HOST_MEMORY_KIB] = "memory_kib",
        [HOST_THP_DEFRAG] = "thp_defrag",
        [HOST_OVERCOMMIT] = "overcommit_memory",
        [HOST_ASLR] = "aslr",
        [HOST_GOVERNOR] = "governor",
        [HOST_BOOST] = "boost",
};

static char *bracketed(const char *path) {
        _cleanup_free_ char *line = first_line(path);
        char *open = line ? strchr(line, '[') : NULL, *close = open ? strchr(open, ']') : NULL;
        return close ? strndup(open + 1, (size_t) (close - open - 1)) : NULL;
}

static char *number(unsigned long long n) {
        char *s = NULL;
        return asprintf(&s, "%llu", n) < 0 ? NULL : s;
}

/* Distinct (package, core) pairs of the online CPUs. */
static char *physical_cores(void) {
        unsigned long long seen[1024];
        size_t n = 0;
        long cpus = sysconf(_SC_NPROCESSORS_CONF);
        for (long cpu = 0; cpu < cpus && n < 1024; cpu++) {
                char path[128];
                snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/topology/core_id", cpu);
                _cleanup_free_ char *core = first_line(path);
                snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/topology/physical_package_id",
                         cpu);
                _cleanup_free_ char *package = first_line(path);
                if (!core || !package)
                        continue;
                unsigned long long id = strtoull(package, NULL, 10) << 32 | strtoull(core, NULL, 10);
                bool known = false;
                for (size_t i = 0; i < n; i++)
                        known |= seen[i] == id;
                if (!known)
                        seen[n++] = id;
        }
        return n ? number(n) : NULL;
}

static char *numa_nodes(void) {
        unsigned long long n = 0;
        for (int node = 0; node < 1024; node++) {
                char path[64];
                snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
                if (access(path, F_OK) == 0)
                        n++;
        }
        return n ? number(n) : NULL;
}

static char *memory_kib(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/meminfo", "re");
        unsigned long long kib;
        return f && fscanf(f, "MemTotal: %llu kB", &kib) == 1 ? number(kib) : NULL;
}

/* cpufreq boost ("1" on) or intel_pstate no_turbo ("1" off), as on/off. */
static char *boost(void) {
        _cleanup_free_ char *b = first_line("/sys/devices/system/cpu/cpufreq/boost");
        if (b)
                return strdup(strcmp(b, "1") == 0 ? "on" : "off");
        _cleanup_free_ char *no_turbo = first_line("/sys/devices/system/cpu/intel_pstate/no_turbo");
        return no_turbo ? strdup(strcmp(no_turbo, "1") == 0 ? "off" : "on") : NULL;
}

static char *read_fact(HostFact f) {
        switch (f) {
        case HOST_MACHINE_ID:
                return first_line("/etc/machine-id");
        case HOST_KERNEL_CMDLINE:
                return first_line("/proc/cmdline");
        case HOST_CORES:
                return physical_cores();
        case HOST_NUMA_NODES:
                return numa_nodes();
        case HOST_MEMORY_KIB:
                return memory_kib();
        case HOST_THP_DEFRAG:
                return bracketed("/sys/kernel/mm/transparent_hugepage/defrag");
        case HOST_OVERCOMMIT:
                return first_line("/proc/sys/vm/overcommit_memory");
        case HOST_ASLR:
                return first_line("/proc/sys/kernel/randomize_va_space");
        case HOST_GOVERNOR:
                return first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
        case HOST_BOOST:
                return boost();
        default:
                return NULL;
        }
}

/* sha256 of "name=value\n" for every field but the hostname, in a fixed order. */
void host_fingerprint(Host *h) {
        Sha256 s;
        sha256_init(&s);
        char line[4096];
        int n = snprintf(line, sizeof(line), "kernel=%s\ncpu_model=%s\ncpus=%u\nglibc=%s\nthp=%s\n",
                         h->kernel, h->cpu_model, h->cpus, h->glibc, h->thp);
        sha256_update(&s, line, (size_t) n < sizeof(line) ? (size_t) n : sizeof(line) - 1);
        for (int f = 0; f < _HOST_FACT_MAX; f++) {
                n = snprintf(line, sizeof(line), "%s=%s\n", host_fact_names[f], h->facts[f]);
                sha256_update(&s, line, (size_t) n < sizeof(line) ? (size_t) n : sizeof(line) - 1);
        }
        uint8_t digest[SHA256_DIGEST_SIZE];
        sha256_final(&s, digest);
        for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
                snprintf(h->fingerprint + 2 * i, 3, "%02x", digest[i]);
}

static int or_unknown(char **field, char *value) {
        *field = value ? value : strdup("unknown");
        return *field ? 0 : -ENOMEM;
}

int host_read(Host *ret) {
        Host h = {};
        struct utsname u;
        bool have_uname = uname(&u) >= 0;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        h.cpus = cpus > 0 ? (unsigned) cpus : 0;
        if (or_unknown(&h.hostname, have_uname ? strdup(u.nodename) : NULL) < 0 ||
            or_unknown(&h.kernel, have_uname ? strdup(u.release) : NULL) < 0 ||
            or_unknown(&h.cpu_model, cpu_model()) < 0 ||
            or_unknown(&h.glibc, strdup(gnu_get_libc_version())) < 0 ||
            or_unknown(&h.thp, bracketed("/sys/kernel/mm/transparent_hugepage/enabled")) < 0) {
                host_done(&h);
                return -ENOMEM;
        }
        for (int f = 0; f < _HOST_FACT_MAX; f++)
                if (or_unknown(&h.facts[f], read_fact((HostFact) f)) < 0) {
                        host_done(&h);
                        return -ENOMEM;
                }
        host_fingerprint(&h);
        *ret = h;
        return 0;
}

void host_done(Host *h) {
        free(h->hostname);
        free(h->kernel);
        free(h->cpu_model);
        free(h->glibc);
        free(h->thp);
        for (int f = 0; f < _HOST_FACT_MAX; f++)
                free(h->facts[f]);
        *h = (Host){};
}
