/* Workers die with the engine, whatever ends it (SIGKILL, SIGTERM, SIGINT, SIGHUP), and take what
 * they started with them; a worker started from a thread that then ends lives on. The engine is
 * this program run again ("engine NOTE"): it starts a worker whose call spins in Python with a
 * child process of its own (fixture_spin), and the test kills it. */
#include "worker.h"

#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../support/tmpdir.h"

static const char *const env[] = {"TFORGE_PYTHONPATH=" FIXTURE_PYTHON_DIR, NULL};

static tforge_worker_options options(void)
{
    tforge_worker_options o = TFORGE_WORKER_OPTIONS_INIT;
    o.executable = TFORGE_EXE;
    o.name = "test";
    o.env = env;
    return o;
}

/* The engine's side, in a fresh process: dispositions as a shell leaves them, a worker, a call
 * that never returns. */
static int engine_main(const char *note)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
            signal(sig, SIG_DFL);
    tforge_worker_options o = options();
    tforge_worker *worker = NULL;
    if (tforge_worker_start(&worker, &o))
        return 3;
    char request[1024], *response = NULL;
    snprintf(request, sizeof request,
             "{\"module\": \"fixture_spin\", \"function\": \"spin\", \"args\": {\"note\": \"%s\"}}",
             note);
    tforge_call_status status;
    tforge_worker_call(worker, request, 0, &response, &status, NULL, 0);
    return 4; /* it answered: the fixture is wrong */
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* How many live (not zombie) processes are in process group `pgid`. */
static int group_size(pid_t pgid)
{
    int n = 0;
    DIR *proc = opendir("/proc");
    struct dirent *e;
    while (proc && (e = readdir(proc))) {
        char path[300], stat[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t got = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[got] = '\0';
        const char *after = strrchr(stat, ')'); /* the command's name may hold anything */
        char state;
        int ppid, group;
        if (after && sscanf(after + 1, " %c %d %d", &state, &ppid, &group) == 3 &&
            group == (int)pgid && state != 'Z')
            n++;
    }
    if (proc)
        closedir(proc);
    return n;
}

/* Runs the engine, kills it with `sig` once its worker spins, and checks that the worker's
 * group (the worker, its keeper and the child it started) is gone a second later. */
static void dies_with_the_engine(int sig)
{
    char note[512], self[4096];
    snprintf(note, sizeof note, "%s/spinning-%d", tmpdir, sig);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    pid_t engine = fork();
    assert_true(engine >= 0);
    if (engine == 0) {
        execl(self, self, "engine", note, (char *)NULL);
        _exit(127);
    }
    int worker = 0, child = 0;
    for (double end = now_s() + 120; now_s() < end && !worker; usleep(20000)) {
        FILE *f = fopen(note, "r");
        if (f && fscanf(f, "%d %d", &worker, &child) != 2)
            worker = 0;
        if (f)
            fclose(f);
    }
    int spinning = worker > 0 ? group_size(worker) : 0; /* the worker and the child, at least */
    int status = 0;
    kill(engine, sig);
    pid_t ended = waitpid(engine, &status, 0);
    double end = now_s() + 1.0;
    while (worker > 0 && group_size(worker) > 0 && now_s() < end)
        usleep(10000);
    int left = worker > 0 ? group_size(worker) : 0;
    if (left) /* not left spinning on the test machine */
        kill(-worker, SIGKILL);
    assert_true(spinning >= 2);
    assert_int_equal(ended, engine);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sig);
    assert_int_equal(left, 0);
}

static void dies_with_an_engine_killed(void **state)
{
    (void)state;
    dies_with_the_engine(SIGKILL);
}

static void dies_with_an_engine_terminated(void **state)
{
    (void)state;
    dies_with_the_engine(SIGTERM);
}

static void dies_with_an_engine_interrupted(void **state)
{
    (void)state;
    dies_with_the_engine(SIGINT);
}

static void dies_with_an_engine_hung_up(void **state)
{
    (void)state;
    dies_with_the_engine(SIGHUP);
}

static const char add_request[] = "{\"module\": \"fixture_worker\", \"function\": \"add\", "
                                  "\"args\": {\"a\": 2, \"b\": 40}}";

/* One call answered (so the process is past everything it does before it runs Python); 1 when
 * it said 42. */
static int answers(tforge_worker *worker)
{
    char *response = NULL, detail[256] = "";
    tforge_call_status status;
    int rc = tforge_worker_call(worker, add_request, 60000, &response, &status, detail,
                                sizeof detail);
    int ok = rc == 0 && status == TFORGE_CALL_OK && response &&
             strcmp(response, "{\"ok\": true, \"result\": 42}") == 0;
    if (!ok)
        fprintf(stderr, "the worker did not answer: %s\n", detail);
    free(response);
    return ok;
}

static void *start_and_call(void *out)
{
    tforge_worker_options o = options();
    return tforge_worker_start(out, &o) == 0 && answers(*(tforge_worker **)out) ? out : NULL;
}

/* PR_SET_PDEATHSIG follows the thread that forked: a worker started (and called) from a thread
 * that has ended since, as the compile pool's does, must answer, in the process it started as. */
static void outlives_the_thread_that_started_it(void **state)
{
    (void)state;
    tforge_worker *worker = NULL;
    pthread_t thread;
    void *started = NULL;
    assert_int_equal(pthread_create(&thread, NULL, start_and_call, &worker), 0);
    assert_int_equal(pthread_join(thread, &started), 0);
    assert_non_null(started);
    usleep(100000); /* a signal sent as the thread ended has arrived */
    assert_true(answers(worker));
    assert_int_equal(tforge_worker_generation(worker), 1);
    tforge_worker_free(worker);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "engine") == 0)
        return engine_main(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dies_with_an_engine_killed),
        cmocka_unit_test(dies_with_an_engine_terminated),
        cmocka_unit_test(dies_with_an_engine_interrupted),
        cmocka_unit_test(dies_with_an_engine_hung_up),
        cmocka_unit_test(outlives_the_thread_that_started_it),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
