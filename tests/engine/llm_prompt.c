/* What a model is told: the shipped template loaded and rendered with every fact, and templates
 * that are not templates refused naming the file, the line and what was expected. */
#include "file.h"
#include "profile.h"
#include "prompt.h"
#include "tforge/error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/tmpdir.h"

#define SHIPPED TFORGE_SOURCE_DIR "/data/prompts/kernel.md"

static void check(int rc)
{
    if (rc)
        fail_msg("%s", tforge_error_last()->message);
}

static void has(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("expected \"%s\" in:\n%s", part, text);
}

static void the_shipped_template_places_every_fact(void **state)
{
    (void)state;
    tforge_prompt prompt;
    check(tforge_prompt_load(&prompt, SHIPPED));
    assert_string_equal(prompt.name, "kernel");
    assert_int_equal(prompt.revision, 1);
    assert_int_equal(strncmp(prompt.digest, "fnv1a64:", 8), 0);

    tforge_profile baseline;
    tforge_profile_init(&baseline);
    check(tforge_profile_set(&baseline, "dram_share", 0.123));
    check(tforge_profile_set(&baseline, "flops_share", 0.004));
    check(tforge_profile_set(&baseline, "registers", 40));
    tforge_prompt_label labels[] = {
        {"latency-bound", "one element loaded per iteration of a loop of 48", 0.8}};
    tforge_prompt_profile profiles[] = {
        {"the baseline", 0.25, &baseline, labels, 1},
        {"the incumbent", NAN, NULL, NULL, 0},
    };
    tforge_prompt_transform transforms[] = {
        {"cache-hints", "eviction hints on loads", "2.0% faster at the incumbent"},
        {"loop-unroll", "unrolls a loop", NULL},
    };
    tforge_prompt_proposal earlier[] = {
        {"compile", "AttributeError: module has no attribute 'lod'", NAN, NAN},
        {"wrong", "1 of 8 elements differ", 0.5, NAN},
        {"ok", "", NAN, 12.0},
        {"refused", "line 3: imports os; only triton, triton.language, torch, math may be "
                    "imported", NAN, NAN},
        {"timeout", "the check took longer than 30 s", NAN, NAN},
    };
    tforge_prompt_facts facts = {
        .path = "rowsum.py", .kernel = "row_sum", .source = "def row_sum():\n    pass\n",
        .analysis = "kernel row_sum: 1 loop (trip count n_cols)\n",
        .device = tforge_device_h200(), .profiles = profiles, .n_profiles = 2,
        .transforms = transforms, .n_transforms = 2, .proposals = earlier, .n_proposals = 5};
    char *system = NULL, *user = NULL;
    check(tforge_prompt_render(&system, &user, &prompt, &facts));
    /* the rules of the answer are the system message */
    has(system, "same name and the same parameters");
    has(system, "`row_sum`");
    has(system, "tl.constexpr");
    has(system, "Import only triton, triton.language, torch and math");
    assert_null(strstr(system, "{{"));
    /* the user message: the kernel, the analysis, the device, the profiles, the transforms, the
     * earlier proposals, each as the model reads it */
    has(user, "## The kernel file (rowsum.py), kernel `row_sum`\n\n```python\ndef row_sum():\n"
              "    pass\n```");
    has(user, "kernel row_sum: 1 loop (trip count n_cols)\n\n## The device");
    has(user, "NVIDIA H200");
    has(user, "132 SMs");
    has(user, "### the baseline\n- time: 0.25 ms\n- speed of light: DRAM bandwidth 12.3% of the "
              "peak, arithmetic 0.4% of the peak\n");
    has(user, "registers=40");
    has(user, "- label latency-bound (confidence 0.80): one element loaded per iteration");
    has(user, "### the incumbent\n- no profile taken\n- labels: none\n");
    has(user, "- cache-hints: eviction hints on loads; 2.0% faster at the incumbent\n");
    has(user, "- loop-unroll: unrolls a loop; not measured\n");
    has(user, "1. did not compile: AttributeError: module has no attribute 'lod'\n");
    has(user, "2. computed a wrong result (max error 0.5): 1 of 8 elements differ\n");
    has(user, "3. ran correctly but 12.0% slower than the incumbent\n");
    has(user, "4. refused before it ran: line 3: imports os;");
    has(user, "5. never finished (timed out): the check took longer than 30 s\n");
    assert_null(strstr(user, "{{"));
    free(system);
    free(user);

    /* nothing known yet: each fact says so */
    tforge_prompt_facts none = {.kernel = "row_sum"};
    check(tforge_prompt_render(&system, &user, &prompt, &none));
    has(user, "(none: this is the first)");
    has(user, "## The device\n\n(not known)");
    has(user, "(none taken)");
    free(system);
    free(user);
    tforge_prompt_dispose(&prompt);
}

/* A template of `text` written to the test's folder, loaded: the return code, the message kept. */
static int load_text(const char *text, char *message, size_t size)
{
    char path[600];
    snprintf(path, sizeof path, "%s/prompt.md", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    tforge_prompt prompt;
    int rc = tforge_prompt_load(&prompt, path);
    snprintf(message, size, "%s", rc ? tforge_error_last()->message : "");
    if (!rc)
        tforge_prompt_dispose(&prompt);
    return rc;
}

static void what_is_not_a_template_is_refused_naming_the_line(void **state)
{
    (void)state;
    char message[512];
    assert_int_equal(load_text("tforge-prompt mine 2\n=== system ===\nrules {{kernel}}\n"
                               "=== user ===\n{{source}}\n", message, sizeof message), 0);
    assert_int_equal(load_text("a prompt\n=== system ===\n=== user ===\n", message,
                               sizeof message), TFORGE_EINPUT);
    has(message, "prompt.md:1: expected \"tforge-prompt NAME REVISION\"");
    assert_int_equal(load_text("tforge-prompt k 1\n=== user ===\nx\n", message, sizeof message),
                     TFORGE_EINPUT);
    has(message, "expected a line \"=== system ===\" and after it a line \"=== user ===\"");
    assert_int_equal(load_text("tforge-prompt k 1\n=== user ===\nx\n=== system ===\ny\n", message,
                               sizeof message), TFORGE_EINPUT);
    assert_int_equal(load_text("tforge-prompt k 1\n=== system ===\nr\n=== user ===\n\n"
                               "{{kernel}} {{secret}}\n", message, sizeof message),
                     TFORGE_EINPUT);
    has(message, "prompt.md:6: {{secret}} is no fact the prompt knows");
    assert_int_equal(load_text("tforge-prompt k 1\n=== system ===\n{{kernel\n=== user ===\n",
                               message, sizeof message), TFORGE_EINPUT);
    has(message, "prompt.md:3: a {{ without its }}");
    tforge_prompt prompt;
    assert_int_equal(tforge_prompt_load(&prompt, TFORGE_SOURCE_DIR "/no/such/prompt.md"),
                     TFORGE_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_shipped_template_places_every_fact),
        cmocka_unit_test(what_is_not_a_template_is_refused_naming_the_line),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
