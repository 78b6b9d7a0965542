/* SPDX-License-Identifier: MIT */
/* Preloaded by bench/probe-overhead.sh as the floor any LD_PRELOAD interposer pays: loading,
 * mapping and relocating one more shared object. Defines nothing a program calls. */
int alloclab_empty_preload;
