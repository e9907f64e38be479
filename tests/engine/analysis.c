#include "analysis.h"

#include "tforge/error.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SPAN(l)                                                                                   \
    "{\"line\": " #l ", \"col\": 4, \"end_line\": " #l ", \"end_col\": 9, \"start\": 0, \"end\": 5}"

/* One kernel with a bit of everything the parser types. */
static const char good[] =
    "{\"path\": \"k.py\", \"kernels\": [{\"name\": \"add\", \"span\": " SPAN(3) ","
    " \"decorators\": [{\"kind\": \"jit\", \"text\": \"triton.jit\", \"span\": " SPAN(2) "}],"
    " \"jit_options\": {}, \"heuristics\": null,"
    " \"autotune\": {\"configs_text\": \"[...]\", \"configs_literal\": true, \"key\": [\"n\"],"
    "   \"configs\": [{\"BLOCK\": 128, \"num_warps\": 4}], \"pre_hook\": null,"
    "   \"span\": " SPAN(1) "},"
    " \"params\": [{\"name\": \"x_ptr\", \"kind\": \"pointer\", \"default\": null,"
    "   \"span\": " SPAN(3) "},"
    "   {\"name\": \"BLOCK\", \"kind\": \"constexpr\", \"default\": 128,"
    "    \"uses\": [\"arange\", \"mask\"], \"span\": " SPAN(3) "}],"
    " \"loops\": [{\"kind\": \"tl.range\", \"var\": \"i\", \"start\": \"0\", \"stop\": \"n\","
    "   \"step\": \"BLOCK\", \"trip_count\": \"cdiv(n, BLOCK)\", \"depth\": 0,"
    "   \"options\": {\"num_stages\": \"2\"}, \"span\": " SPAN(5) ","
    "   \"iter_span\": " SPAN(5) ", \"func_span\": " SPAN(5) "}],"
    " \"memops\": [{\"op\": \"load\", \"pointer\": \"x_ptr + offs\", \"mask\": \"offs < n\","
    "   \"block_pointer\": false, \"descriptor\": false, \"in_loop\": true,"
    "   \"span\": " SPAN(6) "}],"
    " \"dots\": [], \"reductions\": [{\"op\": \"sum\", \"input\": \"x\", \"axis\": \"0\","
    "   \"span\": " SPAN(7) "}], \"atomics\": [],"
    " \"program_ids\": [{\"axis\": \"0\", \"span\": " SPAN(4) "}],"
    " \"num_programs\": [{\"axis\": \"0\", \"span\": " SPAN(4) "}], \"calls\": [],"
    " \"launch_sites\": [{\"kernel\": \"add\", \"function\": \"run\", \"qualname\": \"run\","
    "   \"params\": [\"x\"],"
    "   \"grid\": {\"text\": \"(4,)\", \"kind\": \"tuple\", \"assigned\": null},"
    "   \"args\": [\"x\"], \"kwargs\": {\"BLOCK\": \"B\"},"
    "   \"num_warps\": null, \"num_stages\": null,"
    "   \"constexprs\": [{\"name\": \"BLOCK\", \"value\": \"B\", \"assigned\": \"B = 128\","
    "     \"from_param\": false, \"positional\": false}],"
    "   \"span\": " SPAN(10) ", \"function_span\": " SPAN(9) "}],"
    " \"tunables\": [{\"name\": \"BLOCK\", \"kind\": \"block\", \"why\": \"\","
    "   \"domain\": \"powers of two\", \"covers_row\": \"n\", \"relates_to\": [\"n\"],"
    "   \"dot\": false}],"
    " \"constraints\": [{\"expr\": \"BLOCK >= n\", \"why\": \"one block\"}],"
    " \"math\": [{\"op\": \"exp\", \"span\": " SPAN(7) ", \"func_span\": " SPAN(7) ","
    "   \"arg_span\": " SPAN(7) "}],"
    " \"offsets\": [{\"name\": \"offs\", \"multiple\": \"BLOCK\", \"contiguous\": \"BLOCK\","
    "   \"span\": " SPAN(4) "}],"
    " \"tile_map\": {\"form\": \"grid2d\", \"pid\": null, \"num_pid_n\": null,"
    "   \"m_target\": \"pid_m\", \"n_target\": \"pid_n\", \"m_stmt\": " SPAN(4) ","
    "   \"n_stmt\": " SPAN(4) "}}],"
    " \"functions\": [{\"name\": \"run\", \"qualname\": \"run\", \"span\": " SPAN(9) "}],"
    " \"device_queries\": [{\"text\": \"DEVICE = torch.cuda.current_device()\","
    "   \"span\": " SPAN(1) "}]}";

static void parses_a_good_document(void **state)
{
    (void)state;
    tforge_ir_file *f = NULL;
    assert_int_equal(tforge_ir_parse(&f, good, "k.py"), 0);
    assert_string_equal(f->path, "k.py");
    assert_int_equal(f->n_kernels, 1);
    const tforge_ir_kernel *k = &f->kernels[0];
    assert_string_equal(k->name, "add");
    assert_int_equal(k->span.line, 3);
    assert_int_equal(k->span.end_col, 9);
    assert_int_equal(k->span.end, 5);
    assert_int_equal(k->n_math, 1);
    assert_string_equal(k->math[0].op, "exp");
    assert_int_equal(k->n_offsets, 1);
    assert_string_equal(k->offsets[0].multiple, "BLOCK");
    assert_non_null(k->tile_map);
    assert_string_equal(k->tile_map->form, "grid2d");
    assert_string_equal(k->tile_map->n_target, "pid_n");
    assert_int_equal(k->n_params, 2);
    assert_int_equal(k->params[0].kind, TFORGE_IR_POINTER);
    assert_null(k->params[0].default_json);
    assert_int_equal(k->params[1].kind, TFORGE_IR_CONSTEXPR);
    assert_string_equal(k->params[1].default_json, "128");
    assert_int_equal(k->params[1].n_uses, 2);
    assert_string_equal(k->params[1].uses[1], "mask");
    assert_string_equal(k->loops[0].trip_count, "cdiv(n, BLOCK)");
    assert_string_equal(k->loops[0].options[0].name, "num_stages");
    assert_string_equal(k->loops[0].options[0].text, "2");
    assert_true(k->memops[0].in_loop);
    assert_string_equal(k->memops[0].mask, "offs < n");
    assert_null(k->memops[0].other);
    assert_string_equal(k->reductions[0].detail, "0");
    assert_int_equal(k->n_program_ids, 2);
    assert_string_equal(k->program_ids[1].op, "num_programs");
    assert_non_null(k->autotune);
    assert_true(k->autotune->configs_literal);
    assert_string_equal(k->autotune->key, "[\"n\"]");
    assert_int_equal(k->autotune->configs[0].n_values, 2);
    assert_string_equal(k->autotune->configs[0].values[0].text, "128");
    assert_null(k->heuristics);
    const tforge_ir_launch_site *s = &k->launch_sites[0];
    assert_string_equal(s->grid_kind, "tuple");
    assert_null(s->grid_assigned);
    assert_string_equal(s->constexprs[0].assigned, "B = 128");
    assert_string_equal(s->kwargs[0].text, "B");
    assert_int_equal(s->function_span.line, 9);
    assert_int_equal(k->tunables[0].kind, TFORGE_IR_BLOCK);
    assert_string_equal(k->tunables[0].covers_row, "n");
    assert_string_equal(k->constraints[0].expr, "BLOCK >= n");
    assert_string_equal(f->device_queries[0].text, "DEVICE = torch.cuda.current_device()");

    char *report = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&report, &size);
    tforge_ir_print(out, f, NULL);
    fclose(out);
    assert_non_null(strstr(report, "kernel add (k.py:3)"));
    assert_non_null(strstr(report, "k.py:5 tl.range i in [0, n) step BLOCK: cdiv(n, BLOCK) trips"));
    assert_non_null(strstr(report, "launched at k.py:10 run(x): grid (4,) (tuple)"));
    assert_non_null(strstr(report, "constraint BLOCK >= n"));
    assert_non_null(strstr(report, "k.py:1 DEVICE = torch.cuda.current_device()"));
    free(report);
    tforge_ir_free(f);
}

/* Each bad document and what its error must say (the file and the field). */
static const struct {
    const char *json, *message;
} bad[] = {
    {"not json", "k.py: analysis: expected a JSON object"},
    {"{\"kernels\": []}", "k.py: analysis: path: expected a string, got nothing"},
    {"{\"path\": \"k.py\"}", "k.py: analysis: kernels: expected a list, got nothing"},
    {"{\"path\": \"k.py\", \"kernels\": [3]}", "kernels[0]: expected an object, got 3"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"span\": " SPAN(1) ", \"params\": []}]}",
     "kernels[0].name: expected a string, got nothing"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"params\": []}]}",
     "kernels[0].span: expected a span {line, col, end_line, end_col, start, end}, got nothing"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": {\"line\": 1, \"col\": 0,"
     " \"end_line\": \"2\", \"end_col\": 0}, \"params\": []}]}",
     "kernels[0].span.end_line: expected an integer, got \"2\""},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\":"
     " [{\"name\": \"p\", \"kind\": \"ptr\", \"span\": " SPAN(1) "}]}]}",
     "kernels[0].params[0].kind: expected one of scalar, pointer, constexpr, got \"ptr\""},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\":"
     " [{\"name\": \"p\", \"kind\": \"constexpr\", \"uses\": [\"mask\", 1], \"span\": " SPAN(1)
     "}]}]}",
     "kernels[0].params[0].uses[1]: expected a string, got 1"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"memops\": [{\"op\": \"load\", \"in_loop\": 1, \"span\": " SPAN(1) "}]}]}",
     "kernels[0].memops[0].in_loop: expected true or false, got 1"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"launch_sites\": [{\"function\": \"f\", \"qualname\": \"f\", \"grid\": {\"text\": \"g\","
     " \"kind\": \"call\"}, \"span\": " SPAN(1) ", \"function_span\": " SPAN(1) "}]}]}",
     "kernels[0].launch_sites[0].grid.kind: expected one of tuple, lambda, name, expression"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"tunables\": [{\"name\": \"B\", \"kind\": \"tile\"}]}]}",
     "kernels[0].tunables[0].kind: expected one of fixed, block, step, group, warps, stages"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"loops\": [{\"kind\": \"range\", \"var\": \"i\", \"start\": \"0\", \"stop\": \"n\","
     " \"step\": \"1\", \"trip_count\": \"n\", \"depth\": 0, \"options\": [], \"span\": " SPAN(1)
     "}]}]}",
     "kernels[0].loops[0].options: expected an object, got []"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"autotune\": [1]}]}",
     "kernels[0].autotune: expected an object or null, got [1]"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"autotune\": {\"configs_text\": 7, \"span\": " SPAN(1) "}}]}",
     "kernels[0].autotune.configs_text: expected a string, got 7"},
    {"{\"path\": \"k.py\", \"kernels\": [], \"device_queries\": [{\"text\": \"x\"}]}",
     "device_queries[0].span: expected a span"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"gemm\": [1]}]}",
     "kernels[0].gemm: expected an object or null, got [1]"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"gemm\": {\"m\": \"M\", \"n\": \"N\", \"k\": \"K\", \"block_m\": \"BM\", \"block_n\": \"BN\","
     " \"block_k\": \"BK\", \"acc\": \"acc\", \"k_var\": \"k\", \"k_offset\": \"k\","
     " \"a\": {\"base\": 7}}}]}",
     "kernels[0].gemm.a.base: expected a string, got 7"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"loop_tails\": [{\"form\": \"while\"}]}]}",
     "kernels[0].loop_tails[0].form: expected one of step, count, diagonal"},
    {"{\"path\": \"k.py\", \"kernels\": [{\"name\": \"k\", \"span\": " SPAN(1) ", \"params\": [],"
     " \"scale_folds\": [{\"x\": 7}]}]}",
     "kernels[0].scale_folds[0].x: expected a string, got 7"},
};

static void refuses_each_bad_field(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tforge_ir_file *f = (tforge_ir_file *)&bad; /* must come back NULL */
        int rc = tforge_ir_parse(&f, bad[i].json, "k.py");
        if (rc != TFORGE_EINPUT || !strstr(tforge_error_last()->message, bad[i].message))
            fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc,
                     tforge_error_last()->message, bad[i].message);
        assert_null(f);
        assert_non_null(strstr(tforge_error_last()->message, "k.py: analysis: "));
    }
}

/* The analysis of a real file, as `tforge analyze --json` prints it. */
/* The golden document of `name` (tests/golden/analyze/NAME.json), parsed. */
static tforge_ir_file *golden(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, GOLDEN_DIR "/%s.json", name);
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    char *json = calloc(1, 1 << 20);
    size_t n = fread(json, 1, (1 << 20) - 1, in);
    fclose(in);
    assert_true(n > 0);
    tforge_ir_file *f = NULL;
    assert_int_equal(tforge_ir_parse(&f, json, path), 0);
    free(json);
    return f;
}

static void reads_a_golden_document(void **state)
{
    (void)state;
    tforge_ir_file *f = golden("gemm_autotune");
    assert_int_equal(f->n_kernels, 2);
    const tforge_ir_kernel *k = &f->kernels[0];
    assert_string_equal(k->name, "matmul_kernel");
    assert_non_null(k->autotune);
    assert_false(k->autotune->configs_literal);
    assert_int_equal(k->autotune->n_configs, 0);
    assert_string_equal(k->autotune->pre_hook, "zero_output");
    assert_int_equal(k->n_launch_sites, 1);
    assert_string_equal(k->launch_sites[0].grid_kind, "name");
    assert_int_equal(k->n_dots, 1);
    assert_string_equal(k->dots[0].m, "BLOCK_SIZE_M");
    int group = 0;
    for (size_t i = 0; i < k->n_tunables; i++)
        group += k->tunables[i].kind == TFORGE_IR_GROUP;
    assert_int_equal(group, 1);
    const tforge_ir_gemm *g = k->gemm;
    assert_non_null(g);
    assert_string_equal(g->block_k, "BLOCK_SIZE_K");
    assert_string_equal(g->k_offset, "k * BLOCK_SIZE_K");
    assert_false(g->k_advanced); /* its masks read the loop variable */
    assert_string_equal(g->a.stride_col, "stride_ak");
    assert_string_equal(g->b.col_start, "pid_n * BLOCK_SIZE_N");
    assert_string_equal(g->c.value, "c");
    assert_null(g->a.value);
    assert_true(g->a.advance.end > g->a.advance.start);
    assert_int_equal(g->c.advance.end, 0); /* C is not advanced: a zero span */
    assert_string_equal(g->pid, "pid");
    assert_true(g->n_lines > 20);
    assert_int_equal(g->lines[0].line, g->pid_stmt.line);
    assert_int_equal(g->lines[0].col, 0);
    assert_null(f->kernels[1].gemm);
    assert_int_equal(k->n_loop_tails, 1); /* the K loop: its loads' masks and others cut */
    const tforge_ir_loop_tail *t = &k->loop_tails[0];
    assert_string_equal(t->form, "count");
    assert_string_equal(t->block, "BLOCK_SIZE_K");
    assert_int_equal(t->n_drops, 4);
    assert_int_equal(t->n_trues, 0); /* no tl.where in it */
    assert_int_equal(t->body.col, 0);
    assert_true(t->stop.start > t->span.start && t->body.end == t->span.end);
    assert_int_equal(k->n_scale_folds, 0); /* an accumulating dot */
    tforge_ir_free(f);
}

static void reads_the_scale_folds(void **state)
{
    (void)state;
    tforge_ir_file *f = golden("attention_causal");
    const tforge_ir_kernel *k = &f->kernels[0];
    assert_int_equal(k->n_scale_folds, 1);
    const tforge_ir_scale_fold *d = &k->scale_folds[0];
    assert_string_equal(d->x, "qk");
    assert_string_equal(d->scale, "qk_scale");
    assert_int_equal(d->n_params, 1);
    assert_string_equal(d->params[0], "sm_scale");
    assert_int_equal(d->n_maxes, 1);
    assert_int_equal(d->n_subs, 1);
    /* the cut ends the statement; the statement, the max and the subtraction are in the loop */
    assert_int_equal(d->cut.end, d->stmt.end);
    assert_true(d->loop.start < d->stmt.start && d->stmt.end < d->maxes[0].start &&
                d->maxes[0].end < d->loop.end && d->subs[0].end < d->loop.end);
    tforge_ir_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(parses_a_good_document),
                                       cmocka_unit_test(refuses_each_bad_field),
                                       cmocka_unit_test(reads_a_golden_document),
                                       cmocka_unit_test(reads_the_scale_folds)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
