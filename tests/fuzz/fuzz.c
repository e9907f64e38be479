/* Bounded mutation fuzzing, in CI, of the two parsers that read what users write: the constraint
 * language (tforge_space_add_constraint) and recorded spaces (tforge_recording_read). No input
 * may crash them (the ASan build runs this too), and every recording that reads must write and
 * read back: what export writes, import reads.
 *
 * usage: test_fuzz SECONDS SEED_FILE...  (each target gets SECONDS; seed files starting with
 * '{' are recordings, the others hold one constraint a line). Deterministic for a given number
 * of iterations: every mutation comes from a generator seeded by the iteration. */
#include "recording.h"
#include "tforge/error.h"
#include "tforge/log.h"
#include "tforge/plugin/rng.h"
#include "tforge/space.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct corpus {
    char **texts;
    size_t *lengths, n, cap;
} corpus;

static void add(corpus *c, const char *text, size_t len)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->texts = realloc(c->texts, c->cap * sizeof *c->texts);
        c->lengths = realloc(c->lengths, c->cap * sizeof *c->lengths);
    }
    c->texts[c->n] = malloc(len + 1);
    memcpy(c->texts[c->n], text, len);
    c->texts[c->n][len] = '\0';
    c->lengths[c->n++] = len;
}

static void dispose(corpus *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->texts[i]);
    free(c->texts);
    free(c->lengths);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Pieces a mutation splices in: tokens of both grammars and hostile values. */
static const char *const pieces[] = {
    "(", ")", "[", "]", "{", "}", ",", ":", "\"", "'", " and ", " or ", "not ", "==", "!=", "<=",
    "**", "//", "%", "-", "+", "*", "/", "min(", "max(", "abs(", "True", "False", "1e400",
    "-1e400", "NaN", "0", "-1", "65536", "null", "true", "\\u0000", "\\", "\"time\": ",
    "\"times\": [", "\"cache\": {", "\"results\": [", "BLOCK", "num_warps", "a,b", "\xff",
    "999999999999999999999", "1.5e-308", "[[1, 2], [3]]"};
#define N_PIECES (sizeof pieces / sizeof *pieces)

/* A mutation of `seed` into `out` (of capacity `cap`): bytes flipped, deleted, repeated, pieces
 * inserted, the text cut, or spliced with another. Returns its length. */
static size_t mutate(char *out, size_t cap, const corpus *c, tforge_rng *rng)
{
    size_t s = (size_t)tforge_rng_below(rng, c->n), len = c->lengths[s];
    if (len >= cap)
        len = cap - 1;
    memcpy(out, c->texts[s], len);
    uint64_t edits = 1 + tforge_rng_below(rng, 8);
    for (uint64_t e = 0; e < edits; e++) {
        size_t at = len ? (size_t)tforge_rng_below(rng, len) : 0;
        switch (tforge_rng_below(rng, 6)) {
        case 0: /* flip a byte */
            if (len)
                out[at] = (char)tforge_rng_below(rng, 256);
            break;
        case 1: { /* delete a run */
            size_t n = (size_t)tforge_rng_below(rng, 16);
            if (at + n > len)
                n = len - at;
            memmove(out + at, out + at + n, len - at - n);
            len -= n;
            break;
        }
        case 2: { /* insert a piece */
            const char *p = pieces[tforge_rng_below(rng, N_PIECES)];
            size_t n = strlen(p);
            if (len + n < cap) {
                memmove(out + at + n, out + at, len - at);
                memcpy(out + at, p, n);
                len += n;
            }
            break;
        }
        case 3: /* cut */
            len = at;
            break;
        case 4: { /* repeat a run */
            size_t n = (size_t)tforge_rng_below(rng, 64);
            if (at + n > len)
                n = len - at;
            if (len + n < cap) {
                memmove(out + at + n, out + at, len - at);
                len += n;
            }
            break;
        }
        default: { /* splice the tail of another seed */
            size_t o = (size_t)tforge_rng_below(rng, c->n), from = 0;
            if (c->lengths[o])
                from = (size_t)tforge_rng_below(rng, c->lengths[o]);
            size_t n = c->lengths[o] - from;
            if (at + n >= cap)
                n = cap - 1 - at;
            memcpy(out + at, c->texts[o] + from, n);
            len = at + n;
        }
        }
    }
    out[len] = '\0';
    return len;
}

static unsigned long fuzz_constraints(const corpus *c, double seconds)
{
    static const double values[] = {16, 32, 64, 128};
    static const char *const modes[] = {"fast", "slow"};
    char text[4096];
    unsigned long i = 0, accepted = 0;
    for (double end = now_s() + seconds; now_s() < end; i++) {
        tforge_rng rng;
        tforge_rng_seed(&rng, i);
        mutate(text, sizeof text, c, &rng);
        tforge_space *space;
        if (tforge_space_new(&space) || tforge_space_add_values(space, "BLOCK", values, 4) ||
            tforge_space_add_values(space, "num_warps", values, 4) ||
            tforge_space_add_categorical(space, "mode", modes, 2) ||
            tforge_space_add_boolean(space, "flag")) {
            fprintf(stderr, "fuzz: cannot build the space: %s\n", tforge_error_last()->message);
            exit(1);
        }
        if (tforge_space_add_constraint(space, text) == 0) {
            accepted++;
            tforge_level point[4];
            for (int k = 0; k < 8; k++) {
                for (int d = 0; d < 4; d++)
                    point[d] = (tforge_level)tforge_rng_below(&rng, d < 2 ? 4 : 2);
                tforge_space_is_valid(space, point);
            }
        }
        tforge_space_free(space);
    }
    printf("constraints: %lu inputs, %lu accepted\n", i, accepted);
    return i;
}

/* What must survive a write and a read: every entry's levels, status, time and runs (Kernel
 * Tuner's file has no word for a timeout or a wrong answer, and writes 0 for timing fields it
 * requires and the entry lacks). Returns the first entry that differs, or -1. */
static long differs(const tforge_recording *a, const tforge_recording *b)
{
    if (a->n_entries != b->n_entries || a->n_params != b->n_params)
        return 0;
    for (size_t e = 0; e < a->n_entries; e++) {
        const tforge_recording_entry *x = &a->entries[e], *y = &b->entries[e];
        int same_time = x->time == y->time || (x->time != x->time && y->time != y->time);
        if (memcmp(x->levels, y->levels, a->n_params * sizeof *x->levels) ||
            (x->status < TFORGE_STATUS_TIMEOUT && x->status != y->status) || !same_time ||
            x->n_times != y->n_times ||
            (x->n_times && memcmp(x->times, y->times, x->n_times * sizeof *x->times)))
            return (long)e;
    }
    return -1;
}

static int write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(text, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static unsigned long fuzz_recordings(const corpus *c, double seconds, const char *dir,
                                     unsigned long *failures)
{
    static char text[1 << 17];
    char in[512], kt[512], t4[512];
    snprintf(in, sizeof in, "%s/input.json", dir);
    snprintf(kt, sizeof kt, "%s/out.json", dir);
    snprintf(t4, sizeof t4, "%s/out.t4.json", dir);
    unsigned long i = 0, read = 0;
    for (double end = now_s() + seconds; now_s() < end; i++) {
        tforge_rng rng;
        tforge_rng_seed(&rng, i);
        size_t len = mutate(text, sizeof text, c, &rng);
        tforge_recording *rec = NULL, *back = NULL;
        if (write_file(in, text, len) || tforge_recording_read(&rec, in))
            continue;
        read++;
        const char *const outs[2] = {kt, t4};
        for (int k = 0; k < 2; k++) {
            tforge_error_clear();
            int rc = k ? tforge_recording_write_t4(rec, outs[k])
                       : tforge_recording_write_kt(rec, outs[k]);
            long e = -1;
            if (!rc && !(rc = tforge_recording_read(&back, outs[k])))
                e = differs(rec, back);
            if (rc || e >= 0) {
                fprintf(stderr, "fuzz: input %lu reads but its %s file does not read back the "
                        "same (%s; entry %ld)\n", i, k ? "T4" : "Kernel Tuner",
                        tforge_error_last()->message, e);
                (*failures)++;
                char kept[600];
                snprintf(kept, sizeof kept, "%s.%lu", in, i); /* kept for a look afterwards */
                rename(in, kept);
                fprintf(stderr, "fuzz: the input is kept as %s\n", kept);
                write_file(in, text, len);
            }
            tforge_recording_free(back);
            back = NULL;
        }
        tforge_recording_free(rec);
    }
    printf("recordings: %lu inputs, %lu read and written back\n", i, read);
    return i;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_fuzz SECONDS SEED_FILE...\n");
        return 2;
    }
    tforge_log_set_level(TFORGE_LOG_ERROR);
    double seconds = atof(argv[1]);
    corpus constraints = {0}, recordings = {0};
    for (int a = 2; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (!f) {
            fprintf(stderr, "fuzz: cannot read %s\n", argv[a]);
            return 2;
        }
        static char buf[1 << 17];
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        if (buf[0] == '{') {
            add(&recordings, buf, len);
            continue;
        }
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
            add(&constraints, line, strlen(line));
    }
    if (!constraints.n || !recordings.n) {
        fprintf(stderr, "fuzz: give seed constraints and seed recordings\n");
        dispose(&constraints);
        dispose(&recordings);
        return 2;
    }
    char dir[] = "/tmp/tforge-fuzz-XXXXXX";
    if (!mkdtemp(dir))
        return 2;
    unsigned long failures = 0;
    fuzz_constraints(&constraints, seconds);
    fuzz_recordings(&recordings, seconds, dir, &failures);
    if (!failures) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "fuzz: could not remove %s\n", dir);
    }
    dispose(&constraints);
    dispose(&recordings);
    printf("fuzz: %lu failed\n", failures);
    return failures ? 1 : 0;
}
