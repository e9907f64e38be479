/* The dispatch tree on planted result.json files: one leaf when a config is within 1% at every
 * shape (the config best across them, not one shape's winner), a split over the symbol whose
 * sizes tell the winners apart, at the geometric middle, and the shapes held out spread over the
 * middle; a rewritten winner's file copied beside the dispatch file. */
#include "dispatch.h"
#include "file.h"
#include "support/tmpdir.h"
#include "tforge/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#define A "{\"BLOCK\": 64, \"num_warps\": 4}"
#define B "{\"BLOCK\": 256, \"num_warps\": 8}"

/* shape-<index>.json: a timed tune at (M=4096, N=n) whose history measured A and B as given; the
 * winner the faster. */
static void write_result(char *path, size_t size, size_t index, long n, double a, double b)
{
    snprintf(path, size, "%s/shape-%zu.json", tmpdir, index);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"task\": \"/t/task.json\", \"kernel\": \"k\", \"timed\": true, "
               "\"shape\": {\"index\": %zu, \"values\": {\"M\": 4096, \"N\": %ld}}, "
               "\"best\": {\"config\": %s, \"ms\": %g}, \"history\": ["
               "{\"config\": %s, \"status\": \"ok\", \"ms\": %g}, "
               "{\"config\": %s, \"status\": \"ok\", \"ms\": %g}]}",
            index, n, a <= b ? A : B, a <= b ? a : b, A, a, B, b);
    fclose(f);
}

static tforge_dispatch_set *read_planted(const double (*times)[2], const long *n, size_t count)
{
    char paths[8][512];
    const char *list[8];
    for (size_t i = 0; i < count; i++) {
        write_result(paths[i], sizeof paths[i], i, n[i], times[i][0], times[i][1]);
        list[i] = paths[i];
    }
    tforge_dispatch_set *set = NULL;
    assert_int_equal(tforge_dispatch_read(&set, list, count, NULL), 0);
    return set;
}

static size_t config_of(const tforge_dispatch_set *set, const char *json)
{
    /* the set keeps configs compact, keys in the first winner's order */
    char compact[128];
    size_t k = 0;
    for (const char *c = json; *c; c++)
        if (*c != ' ')
            compact[k++] = *c;
    compact[k] = '\0';
    for (size_t i = 0; i < set->n_configs; i++)
        if (strcmp(set->configs[i], compact) == 0)
            return i;
    fail_msg("%s not among the configs read", compact);
    return 0;
}

static void one_leaf_when_a_config_serves_every_shape(void **state)
{
    (void)state;
    /* B wins shape 1 by 0.4%; A wins the others: A is the best across the three */
    const double times[3][2] = {{1.0, 1.006}, {1.004, 1.0}, {1.0, 1.003}};
    const long n[3] = {1024, 2048, 4096};
    tforge_dispatch_set *set = read_planted(times, n, 3);
    assert_int_equal(tforge_dispatch_fit(set, 4), 0);
    assert_int_equal(set->n_nodes, 1);
    assert_int_equal(set->nodes[0].config, config_of(set, A));
    long long at[2] = {4096, 2048};
    assert_int_equal(tforge_dispatch_choose(set, at), config_of(set, A));
    assert_true(set->nodes[0].worst > 1.0039 && set->nodes[0].worst < 1.0041);
    tforge_dispatch_free(set);
}

static void splits_where_the_winners_change(void **state)
{
    (void)state;
    const double times[4][2] = {{1.0, 2.0}, {1.0, 2.0}, {2.0, 1.0}, {2.0, 1.0}};
    const long n[4] = {256, 512, 4096, 8192};
    tforge_dispatch_set *set = read_planted(times, n, 4);
    assert_int_equal(tforge_dispatch_fit(set, 4), 0);
    assert_int_equal(set->n_nodes, 3);
    assert_string_equal(set->symbols[set->nodes[0].symbol], "N");
    assert_int_equal(set->nodes[0].threshold, 1448); /* floor(sqrt(512 * 4096)) */
    long long small[2] = {4096, 300}, large[2] = {4096, 5000};
    assert_int_equal(tforge_dispatch_choose(set, small), config_of(set, A));
    assert_int_equal(tforge_dispatch_choose(set, large), config_of(set, B));
    /* with depth 0 no split: the one config best across all four */
    assert_int_equal(tforge_dispatch_fit(set, 0), 0);
    assert_int_equal(set->n_nodes, 1);
    tforge_dispatch_free(set);
}

static void held_out_spread_over_the_middle(void **state)
{
    (void)state;
    const double times[5][2] = {{1, 2}, {1, 2}, {1, 2}, {1, 2}, {1, 2}};
    const long n[5] = {256, 512, 1024, 2048, 4096};
    tforge_dispatch_set *set = read_planted(times, n, 5);
    assert_int_equal(tforge_dispatch_hold_out(set, NULL, 0, 2), 0);
    for (size_t s = 0; s < set->n_shapes; s++)
        assert_int_equal(set->shapes[s].held_out, set->shapes[s].index == 1 ||
                                                       set->shapes[s].index == 3);
    size_t absent = 7;
    assert_int_equal(tforge_dispatch_hold_out(set, &absent, 1, 0), TFORGE_EINPUT);
    assert_non_null(strstr(tforge_error_last()->message, "shape 7"));
    assert_int_equal(tforge_dispatch_hold_out(set, NULL, 0, 5), TFORGE_EINPUT);
    tforge_dispatch_free(set);
}

/* A winner that rewrites the source launches its best_variant.py: copied beside the dispatch
 * file and named in VARIANTS; the other configs of a run whose transforms applied are times, not
 * choices (their rewritten files were not kept). */
static void a_rewritten_winner_launches_its_variant(void **state)
{
    (void)state;
    char path[512], variant[512], out[512], copied[600];
    snprintf(variant, sizeof variant, "%s/best_variant.py", tmpdir);
    FILE *f = fopen(variant, "w");
    assert_non_null(f);
    fputs("# the winner's rewritten kernel file\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/result.json", tmpdir);
    assert_non_null(f = fopen(path, "w"));
    /* B is faster here but, of a run that applied transforms, it is no choice; A, the winner
     * (by the re-timing), is */
    fprintf(f, "{\"task\": \"/t/task.json\", \"kernel\": \"k\", \"timed\": true, "
               "\"shape\": {\"index\": 0, \"values\": {\"M\": 1, \"N\": 2}}, "
               "\"best\": {\"config\": %s, \"ms\": 1.0}, \"history\": ["
               "{\"config\": %s, \"status\": \"ok\", \"ms\": 0.9}], "
               "\"transforms\": {\"apply\": [\"scalefold\"], \"winner\": \"scalefold=1\"}}",
            A, B);
    fclose(f);
    const char *list[1] = {path};
    tforge_dispatch_set *set = NULL;
    assert_int_equal(tforge_dispatch_read(&set, list, 1, NULL), 0);
    assert_string_equal(set->shapes[0].variant, variant);
    assert_int_equal(tforge_dispatch_fit(set, 4), 0);
    assert_int_equal(set->nodes[0].config, config_of(set, A));
    snprintf(out, sizeof out, "%s/mm.py", tmpdir);
    const char *key[2] = {"M", NULL};
    assert_int_equal(tforge_dispatch_write(set, out, "tforge dispatch", key, ""), 0);
    char *text = NULL;
    size_t size = 0;
    snprintf(copied, sizeof copied, "%s/mm_variants/shape_0.py", tmpdir);
    assert_int_equal(tforge_file_read(&text, &size, copied), 0);
    assert_string_equal(text, "# the winner's rewritten kernel file\n");
    free(text);
    assert_int_equal(tforge_file_read(&text, &size, out), 0);
    assert_non_null(strstr(text, "VARIANTS = ['mm_variants/shape_0.py']"));
    assert_non_null(strstr(text, "KEY = ['M']"));
    assert_non_null(strstr(text, "no parameter holding N"));
    free(text);
    unlink(copied);
    snprintf(copied, sizeof copied, "%s/mm_variants", tmpdir);
    rmdir(copied);
    tforge_dispatch_free(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_leaf_when_a_config_serves_every_shape),
        cmocka_unit_test(splits_where_the_winners_change),
        cmocka_unit_test(held_out_spread_over_the_middle),
        cmocka_unit_test(a_rewritten_winner_launches_its_variant),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
