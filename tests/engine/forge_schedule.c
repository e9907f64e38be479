/* forge's staged schedule (issue 36): where bo holds the rewrites (tune's unchanged_tail), the
 * rule moves' compound moves wait as long as bo does (rules' compound_after, bo's knobs_first),
 * so that they start from the knobs' winner rather than take the evaluations that find it. */
#include "forge.h"
#include "loop.h"
#include "strategy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

extern const tforge_plugin_module tforge_static_rules;

/* The companion's options for `strategy` under bo's `options`; its compound_after text, or ""
 * when it has none. */
static const char *after_of(const char *strategy, const char *const *options,
                            tforge_forge_companion_texts *texts)
{
    tforge_loop_options o = TFORGE_LOOP_OPTIONS_INIT;
    o.strategy_options = options;
    tforge_forge_companion(&o, strategy, texts);
    if (strcmp(strategy, "forge") != 0) {
        assert_null(o.companion);
        assert_null(o.companion_options);
        return "";
    }
    assert_string_equal(o.companion, "rules");
    assert_ptr_equal(o.companion_options, texts->options);
    size_t n = 0;
    while (o.companion_options[n])
        n++;
    assert_string_equal(o.companion_options[2], "compound=1");
    return n == 4 ? o.companion_options[3] : "";
}

static void the_compound_moves_wait_as_long_as_bo_holds_the_rewrites(void **state)
{
    (void)state;
    tforge_forge_companion_texts texts;
    assert_string_equal(after_of("forge", NULL, &texts), "");
    static const char *const free_tail[] = {"unchanged_tail=0", NULL};
    assert_string_equal(after_of("forge", free_tail, &texts), "");
    static const char *const held[] = {"kappa=3", "unchanged_tail=5", NULL};
    assert_string_equal(after_of("forge", held, &texts), "compound_after=0.5");
    static const char *const held_less[] = {"knobs_first=0.3", "unchanged_tail=5", NULL};
    assert_string_equal(after_of("forge", held_less, &texts), "compound_after=0.3");
    assert_string_equal(after_of("bo", held, &texts), "");
}

/* BLOCK_M (32, 64, 128; a tile) and tma (a rewrite): from the incumbent (64, off), the one
 * compound move is TMA with the larger tile, (128, on). */
static void rules_compound_after_waits_for_its_share_of_the_budget(void **state)
{
    (void)state;
    tforge_space *space;
    tforge_registry *reg;
    static const double tiles[] = {32, 64, 128};
    assert_int_equal(tforge_space_new(&space), 0);
    assert_int_equal(tforge_space_add_values(space, "BLOCK_M", tiles, 3), 0);
    assert_int_equal(tforge_space_add_boolean(space, "tma"), 0);
    assert_int_equal(tforge_space_describe(space, 0, TFORGE_DIM_OWNER_KNOB, TFORGE_DIM_KNOB,
                                           TFORGE_EFFECT_TILE), 0);
    assert_int_equal(tforge_space_describe(space, 1, "tma", TFORGE_DIM_REWRITE,
                                           TFORGE_EFFECT_TMA), 0);
    assert_int_equal(tforge_space_build(space, NULL), 0);
    assert_int_equal(tforge_registry_new(&reg), 0);
    assert_int_equal(tforge_registry_add_static(reg, &tforge_static_rules, "builtin:rules"), 0);
    tforge_space_view view = tforge_space_get_view(space);
    static const tforge_level measured[4][2] = {{1, 0}, {0, 0}, {0, 1}, {2, 0}};
    static const double ms[4] = {1, 2, 3, 4};
    for (int after = 0; after <= 1; after++) {
        static const char *const now[] = {"walk=0", "compound=1", NULL};
        static const char *const half[] = {"walk=0", "compound=1", "compound_after=0.5", NULL};
        tforge_strategy *rules;
        assert_int_equal(tforge_strategy_open(&rules, reg, "rules", &view, 1, 8,
                                              after ? half : now), 0);
        for (uint32_t told = 0; told < 4; told++) {
            tforge_observation o = {measured[told], TFORGE_STATUS_OK, ms[told], 0};
            assert_int_equal(tforge_strategy_tell(rules, &o, 1), 0);
            /* measured as many points as dimensions: the design is over; then half of 8 */
            if (told + 1 < 2)
                continue;
            tforge_level p[2];
            uint32_t n = 9;
            int due = !after || told + 1 >= 4;
            assert_int_equal(tforge_strategy_ask(rules, 1, p, &n), 0);
            assert_int_equal(n, (uint32_t)due);
            if (n) {
                assert_int_equal(p[0], 2);
                assert_int_equal(p[1], 1);
                break;
            }
        }
        tforge_strategy_close(rules);
    }
    tforge_registry_free(reg);
    tforge_space_free(space);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_compound_moves_wait_as_long_as_bo_holds_the_rewrites),
        cmocka_unit_test(rules_compound_after_waits_for_its_share_of_the_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
