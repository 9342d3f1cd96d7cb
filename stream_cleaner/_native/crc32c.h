/* CRC-32C (Castagnoli), the checksum of Kafka's record batches.

   With SSE 4.2 (every x86-64 CPU since 2008) the CPU's crc32 instruction, 8 bytes at a time;
   elsewhere a table, a byte at a time. The choice is made once, at the first call. */

#ifndef STREAM_CLEANER_CRC32C_H
#define STREAM_CLEANER_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uint32_t sc_crc32c_table[256];
static int sc_crc32c_mode = -1; /* -1 unknown, 0 table, 1 instruction */
static int sc_crc32c_best = 0;   /* the fastest this CPU has */

static uint32_t sc_crc32c_by_table(uint32_t crc, const unsigned char *data, size_t n) {
    while (n--) {
        crc = sc_crc32c_table[(crc ^ *data++) & 0xff] ^ (crc >> 8);
    }
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2")))
static uint32_t sc_crc32c_by_instruction(uint32_t crc, const unsigned char *data, size_t n) {
    uint64_t wide = crc;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, data, 8);
        wide = __builtin_ia32_crc32di(wide, word);
        data += 8;
        n -= 8;
    }
    crc = (uint32_t)wide;
    while (n--) {
        crc = __builtin_ia32_crc32qi(crc, *data++);
    }
    return crc;
}
#endif

static void sc_crc32c_choose(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t crc = i;
        for (int bit = 0; bit < 8; bit++) {
            crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
        }
        sc_crc32c_table[i] = crc;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        sc_crc32c_best = 1;
    }
#endif
    sc_crc32c_mode = sc_crc32c_best;
}

/* The CRC-32C of n bytes. */
static uint32_t sc_crc32c(const unsigned char *data, size_t n) {
    if (sc_crc32c_mode < 0) {
        sc_crc32c_choose();
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (sc_crc32c_mode == 1) {
        return ~sc_crc32c_by_instruction(0xFFFFFFFFu, data, n);
    }
#endif
    return ~sc_crc32c_by_table(0xFFFFFFFFu, data, n);
}

/* For tests: 0 makes sc_crc32c use the table, 1 the fastest way again; returns the mode
   now in use (0 or 1). */
static int sc_crc32c_force(int fastest) {
    if (sc_crc32c_mode < 0) {
        sc_crc32c_choose();
    }
    sc_crc32c_mode = fastest ? sc_crc32c_best : 0;
    return sc_crc32c_mode;
}

#endif
