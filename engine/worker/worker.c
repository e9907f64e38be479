#include "worker.h"

#include "clock.h"
#include "frame.h"
#include "tforge/error.h"
#include "tforge/log.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_FRAME = 256 << 20, STARTUP_TIMEOUT_MS = 300000 };

struct tforge_worker {
    tforge_worker_options options;
    pid_t pid;          /* 0 when no process runs */
    int to_child;       /* write end of the request pipe */
    int from_child;     /* read end of the response pipe */
    int busy;           /* a request was sent and its response not yet collected */
    int ready;          /* the process has said it is ready (its start is not a call's time) */
    double spawned_ms;  /* when the process was started */
    double call_ms;     /* when the pending call's time began; 0 while the process starts */
    unsigned generation;
    unsigned char *buffer; /* the response being read: header, then payload */
    size_t have, want, capacity;
};

double tforge_worker_now_ms(void)
{
    return tforge_clock_s() * 1e3;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* This process's environment with `extra` ("KEY=VALUE") replacing or adding entries, built before
 * fork: the child of a process with several threads may only call async-signal-safe functions
 * before exec, and putenv is not one. The strings are shared, only the array is new. */
static char **child_environment(const char *const *extra)
{
    extern char **environ;
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    while (extra && extra[k])
        k++;
    char **envp = malloc((n + k + 1) * sizeof *envp);
    if (!envp)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        envp[m++] = (char *)extra[i];
    for (size_t i = 0; i < n; i++) {
        int replaced = 0;
        for (size_t j = 0; j < k && !replaced; j++) {
            size_t len = strcspn(extra[j], "=");
            replaced = strncmp(environ[i], extra[j], len) == 0 && environ[i][len] == '=';
        }
        if (!replaced)
            envp[m++] = environ[i];
    }
    envp[m] = NULL;
    return envp;
}

/* The engine's own executable, opened once: a worker started after the file was rebuilt or
 * reinstalled (a long sweep outlives an upgrade) still runs the engine that started it. */
static int self_fd = -1;
static void open_self(void)
{
    self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
}

/* The live workers' process ids, for the stop-signal handler (which may only read atomics):
 * a slot is taken when a process is started and cleared before it is reaped, so that an id the
 * handler kills is never one the system has given to another process. */
enum { MAX_LIVE = 1024 };
static atomic_int live[MAX_LIVE];
static pid_t engine_pid;

static void remember(pid_t pid)
{
    for (size_t i = 0; i < MAX_LIVE; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&live[i], &free_slot, (int)pid))
            return;
    }
    /* the table full: this worker still dies with the engine (PR_SET_PDEATHSIG) */
}

static void forget(pid_t pid)
{
    for (size_t i = 0; i < MAX_LIVE; i++) {
        int was = (int)pid;
        if (atomic_compare_exchange_strong(&live[i], &was, 0))
            return;
    }
}

/* SIGINT, SIGTERM and SIGHUP stop the engine as SIGKILL would, but take each worker's process
 * group (the worker and what it started) with it first; then the signal ends the process as if
 * it had not been caught, so its parent sees which one. What was committed stays in the store. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_stop_signal(int sig)
{
    if (getpid() == engine_pid) /* not a child between fork and exec, whose table is a copy */
        for (size_t i = 0; i < MAX_LIVE; i++) {
            pid_t pid = (pid_t)atomic_load(&live[i]);
            if (pid > 0) {
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
            }
        }
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
    raise(sig); /* delivered when this handler returns: the process ends by it */
}

/* Only where the signal would have ended the engine: one ignored (nohup's SIGHUP, a background
 * job's SIGINT) or handled by the embedding program stays as it is. */
static void catch_stop_signals(void)
{
    engine_pid = getpid();
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
        struct sigaction old, act = {.sa_handler = on_stop_signal};
        sigfillset(&act.sa_mask);
        if (sigaction(stop_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO))
            sigaction(stop_signals[i], &act, NULL);
    }
}

/* What a new worker process needs, prepared before fork, and what fork gave. */
typedef struct fork_job {
    int in, out;     /* the child's ends of the request and response pipes */
    const char *exe; /* the executable, or by_fd: self_fd */
    int by_fd;
    char **envp;
    sigset_t mask;   /* the signal mask of the thread that asked: the worker starts with it */
    pid_t parent;    /* the engine */
    pid_t pid;       /* out: the child, or -1 with `error` */
    int error;
} fork_job;

/* In the child: only async-signal-safe calls until exec (the engine has threads). */
static void exec_worker(const fork_job *job)
{
    /* Killed with the engine, whatever kills it; if the engine left before this line, the
     * signal will never come: leave now. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != job->parent)
        _exit(127);
    /* Its own process group, so that a timeout kills the compilers it started too. */
    setpgid(0, 0);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        sigaction(stop_signals[i], &dfl, NULL);
    pthread_sigmask(SIG_SETMASK, &job->mask, NULL);
    /* Move both ends out of the way first: a pipe end may itself be fd 3 or 4, and dup2
     * onto the same fd would keep its close-on-exec flag. */
    int in = fcntl(job->in, F_DUPFD_CLOEXEC, 10);
    int out = fcntl(job->out, F_DUPFD_CLOEXEC, 10);
    if (in < 0 || out < 0 || dup2(in, 3) < 0 || dup2(out, 4) < 0)
        _exit(127);
    /* What the user's code prints must not reach the engine's standard output. */
    dup2(2, 1);
    char *argv[] = {(char *)job->exe, "__worker", NULL};
    if (job->by_fd)
        fexecve(self_fd, argv, job->envp);
    else
        execve(job->exe, argv, job->envp);
    dprintf(2, "tforge: cannot start a worker from %s: %s\n", job->exe, strerror(errno));
    _exit(127);
}

/* Every worker is forked on one thread that lives as long as the engine: PR_SET_PDEATHSIG fires
 * when the *thread* that forked a child ends, and the compile pool's thread restarts workers,
 * then ends before they are freed. The forker takes one job at a time (jobs_lock), with every
 * signal blocked so that the engine's handlers run elsewhere. A process forked from the engine
 * without exec has no forker thread (nor workers): its first worker starts one of its own. */
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fork_cv = PTHREAD_COND_INITIALIZER;
static fork_job *fork_pending; /* handed to the forker; NULL again once forked */
static pid_t forker_of;        /* the process whose forker runs */

static void *forker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&fork_lock);
    for (;;) {
        while (!fork_pending)
            pthread_cond_wait(&fork_cv, &fork_lock);
        fork_job *job = fork_pending;
        job->pid = fork();
        job->error = errno;
        if (job->pid == 0)
            exec_worker(job);
        if (job->pid > 0)
            remember(job->pid);
        fork_pending = NULL;
        pthread_cond_broadcast(&fork_cv);
    }
    return NULL;
}

/* Under jobs_lock. 0, or an errno value. */
static int start_forker(void)
{
    if (forker_of) /* a copy of the engine's table: its workers are not this process's */
        for (size_t i = 0; i < MAX_LIVE; i++)
            atomic_store(&live[i], 0);
    catch_stop_signals();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits it */
    pthread_attr_t attr;
    pthread_t thread;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int error = pthread_create(&thread, &attr, forker, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!error)
        forker_of = getpid();
    return error;
}

/* Forks `job` on the forker thread; 0, or -1 with job->error. */
static int fork_worker(fork_job *job)
{
    pthread_sigmask(SIG_BLOCK, NULL, &job->mask);
    job->parent = getpid();
    pthread_mutex_lock(&jobs_lock);
    job->error = forker_of == job->parent ? 0 : start_forker();
    job->pid = -1;
    if (!job->error) {
        pthread_mutex_lock(&fork_lock);
        fork_pending = job;
        pthread_cond_broadcast(&fork_cv);
        while (fork_pending == job)
            pthread_cond_wait(&fork_cv, &fork_lock);
        pthread_mutex_unlock(&fork_lock);
    }
    pthread_mutex_unlock(&jobs_lock);
    return job->pid > 0 ? 0 : -1;
}

static int spawn(tforge_worker *w)
{
    int requests[2], responses[2];
    if (pipe2(requests, O_CLOEXEC))
        return tforge_error_set(TFORGE_ERROR, "worker %s: pipe: %s", w->options.name,
                                strerror(errno));
    if (pipe2(responses, O_CLOEXEC)) {
        close(requests[0]);
        close(requests[1]);
        return tforge_error_set(TFORGE_ERROR, "worker %s: pipe: %s", w->options.name,
                                strerror(errno));
    }
    char self[4096];
    const char *exe = w->options.executable;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!exe) {
        pthread_once(&once, open_self);
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = '\0';
        exe = self;
    }
    int by_fd = !w->options.executable && self_fd >= 0;
    char **envp = child_environment(w->options.env);
    if (!envp) {
        close(requests[0]);
        close(requests[1]);
        close(responses[0]);
        close(responses[1]);
        return tforge_error_set(TFORGE_ENOMEM, "worker %s: out of memory", w->options.name);
    }
    fflush(NULL);
    fork_job job = {.in = requests[0], .out = responses[1], .exe = exe, .by_fd = by_fd,
                    .envp = envp};
    if (fork_worker(&job)) {
        free(envp);
        close(requests[0]);
        close(requests[1]);
        close(responses[0]);
        close(responses[1]);
        return tforge_error_set(TFORGE_ERROR, "worker %s: fork: %s", w->options.name,
                                strerror(job.error));
    }
    pid_t pid = job.pid;
    free(envp);
    close(requests[0]);
    close(responses[1]);
    /* Never block on a half-sent frame: the deadline must hold whatever the child does. */
    fcntl(responses[0], F_SETFL, fcntl(responses[0], F_GETFL) | O_NONBLOCK);
    w->pid = pid;
    w->to_child = requests[1];
    w->from_child = responses[0];
    w->busy = 0;
    w->ready = 0;
    w->spawned_ms = tforge_worker_now_ms();
    w->call_ms = 0;
    w->have = 0;
    w->want = 4;
    w->generation++;
    tforge_log(TFORGE_LOG_DEBUG, "worker %s started as process %d", w->options.name, (int)pid);
    return 0;
}

/* Describes how a reaped process ended. */
static void describe_exit(int wstatus, char *detail, size_t size)
{
    if (!detail || !size)
        return;
    if (WIFSIGNALED(wstatus))
        snprintf(detail, size, "killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    else if (WIFEXITED(wstatus))
        snprintf(detail, size, "exited with status %d", WEXITSTATUS(wstatus));
    else
        snprintf(detail, size, "ended");
}

/* Ends the process (killing its group) and reaps it. */
static void stop(tforge_worker *w, int force, char *detail, size_t size)
{
    if (!w->pid)
        return;
    forget(w->pid);
    close_fd(&w->to_child);
    close_fd(&w->from_child);
    int wstatus = 0;
    pid_t done = 0;
    if (!force)
        for (int i = 0; i < 50 && (done = waitpid(w->pid, &wstatus, WNOHANG)) == 0; i++)
            usleep(10000);
    if (done != w->pid) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        waitpid(w->pid, &wstatus, 0);
    }
    describe_exit(wstatus, detail, size);
    w->pid = 0;
    w->busy = 0;
}

int tforge_worker_start(tforge_worker **out, const tforge_worker_options *options)
{
    if (options->version != TFORGE_WORKER_OPTIONS_VERSION)
        return tforge_error_set(TFORGE_EINPUT, "worker options version %u, expected %u",
                                options->version, TFORGE_WORKER_OPTIONS_VERSION);
    tforge_worker *w = calloc(1, sizeof *w);
    if (!w)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory starting a worker");
    w->options = *options;
    w->to_child = w->from_child = -1;
    int rc = spawn(w);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int tforge_worker_send(tforge_worker *w, const char *request)
{
    if (!w->pid) {
        int rc = spawn(w);
        if (rc)
            return rc;
    }
    size_t n = strlen(request);
    /* A write to a dead worker fails with EPIPE; collect() then reports how it died. */
    signal(SIGPIPE, SIG_IGN);
    tforge_frame_write(w->to_child, request, n);
    w->busy = 1;
    w->call_ms = w->ready ? tforge_worker_now_ms() : 0;
    return 0;
}

int tforge_worker_fd(const tforge_worker *w)
{
    return w->from_child;
}

double tforge_worker_deadline_ms(const tforge_worker *w, int timeout_ms)
{
    if (!w->ready)
        return w->spawned_ms + STARTUP_TIMEOUT_MS;
    return timeout_ms > 0 ? w->call_ms + timeout_ms : INFINITY;
}

double tforge_worker_call_start_ms(const tforge_worker *w)
{
    return w->call_ms;
}

int tforge_worker_busy(const tforge_worker *w)
{
    return w->busy;
}

int tforge_worker_collect(tforge_worker *w, char **response, tforge_call_status *status,
                          char *detail, size_t size)
{
    *response = NULL;
    for (;;) {
        if (w->want + 1 > w->capacity) {
            unsigned char *bigger = realloc(w->buffer, w->want + 1);
            if (!bigger)
                return tforge_error_set(TFORGE_ENOMEM, "out of memory reading a response");
            w->buffer = bigger;
            w->capacity = w->want + 1;
        }
        ssize_t k = read(w->from_child, w->buffer + w->have, w->want - w->have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == EAGAIN)
            return 0;
        if (k <= 0) {
            stop(w, 0, detail, size);
            *status = TFORGE_CALL_CRASHED;
            return 1;
        }
        w->have += (size_t)k;
        if (w->have < w->want)
            return 0; /* a partial frame: wait for poll to say there is more */
        if (w->want == 4) {
            const unsigned char *h = w->buffer;
            size_t n = tforge_frame_length(h);
            if (n > MAX_FRAME) {
                stop(w, 1, detail, size);
                if (detail)
                    snprintf(detail, size, "sent a frame of %zu bytes (protocol broken)", n);
                *status = TFORGE_CALL_CRASHED;
                return 1;
            }
            w->want = 4 + n;
            if (n > 0)
                continue;
            if (!w->ready) { /* the new process is up: the pending call's time starts now */
                w->ready = 1;
                w->call_ms = tforge_worker_now_ms();
                w->have = 0;
                w->want = 4;
                continue;
            }
        }
        char *text = malloc(w->want - 4 + 1);
        if (!text)
            return tforge_error_set(TFORGE_ENOMEM, "out of memory reading a response");
        memcpy(text, w->buffer + 4, w->want - 4);
        text[w->want - 4] = '\0';
        w->busy = 0;
        w->have = 0;
        w->want = 4;
        *response = text;
        *status = TFORGE_CALL_OK;
        return 1;
    }
}

void tforge_worker_kill(tforge_worker *w, char *detail, size_t size)
{
    stop(w, 1, detail, size);
}

void tforge_worker_expire(tforge_worker *w, int timeout_ms, char *detail, size_t size)
{
    int starting = !w->ready;
    stop(w, 1, NULL, 0);
    if (detail && starting)
        snprintf(detail, size, "did not start within %d s: killed", STARTUP_TIMEOUT_MS / 1000);
    else if (detail)
        snprintf(detail, size, "gave no answer within %d ms: killed", timeout_ms);
}

int tforge_worker_call(tforge_worker *w, const char *request, int timeout_ms, char **response,
                       tforge_call_status *status, char *detail, size_t size)
{
    int rc = tforge_worker_send(w, request);
    if (rc)
        return rc;
    for (;;) {
        double left = tforge_worker_deadline_ms(w, timeout_ms) - tforge_worker_now_ms();
        if (left <= 0) {
            tforge_worker_expire(w, timeout_ms, detail, size);
            *response = NULL;
            *status = TFORGE_CALL_TIMEOUT;
            return 0;
        }
        struct pollfd p = {w->from_child, POLLIN, 0};
        int ready = poll(&p, 1, isinf(left) ? -1 : (int)left + 1);
        if (ready < 0 && errno != EINTR)
            return tforge_error_set(TFORGE_ERROR, "worker %s: poll: %s", w->options.name,
                                    strerror(errno));
        if (ready > 0) {
            rc = tforge_worker_collect(w, response, status, detail, size);
            if (rc)
                return rc < 0 ? rc : 0;
        }
    }
}

pid_t tforge_worker_pid(const tforge_worker *w)
{
    return w->pid;
}

unsigned tforge_worker_generation(const tforge_worker *w)
{
    return w->generation;
}

void tforge_worker_free(tforge_worker *w)
{
    if (!w)
        return;
    stop(w, 0, NULL, 0);
    free(w->buffer);
    free(w);
}
