/* The worker's side: embeds CPython (the only file that does) and answers framed JSON requests
 * by calling `module.function(**args)`. It also gives that Python a built-in module,
 * `_tforge_profiler`, over a profiler plugin (tforge.profiler/2) of the engine's registry. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "frame.h"
#include "registry.h"
#include "tforge/error.h"
#include "tforge/plugin/profiler.h"
#include "worker.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef TFORGE_PYTHON_EXECUTABLE
#define TFORGE_PYTHON_EXECUTABLE "python3"
#endif
#ifndef TFORGE_PYTHON_DIR
#define TFORGE_PYTHON_DIR ""
#endif

enum { REQUEST_FD = 3, RESPONSE_FD = 4 };

/* ---- _tforge_profiler: one profiler a worker, over the plugins the engine finds ----
 * The folders are the engine's: the worker is the same executable (the installed folder beside
 * it), and the engine exports its --plugin-dir folders in TFORGE_PLUGIN_PATH for its workers. */
static struct {
    tforge_registry *registry;
    const tforge_profiler_interface *api;
    void *state;
} profiler;

static PyObject *profiler_error(const char *what)
{
    const char *message = tforge_error_last()->message;
    PyErr_Format(PyExc_RuntimeError, "%s: %s", what, message && message[0] ? message : "failed");
    return NULL;
}

static void profiler_close(void)
{
    if (profiler.state)
        profiler.api->destroy(profiler.state);
    profiler.state = NULL;
}

/* create(id, device, options: {key: value}) -> (0 | 2 refused | negative, message) */
static PyObject *profiler_create(PyObject *self, PyObject *args)
{
    (void)self;
    const char *id;
    int device;
    PyObject *options;
    if (!PyArg_ParseTuple(args, "siO!", &id, &device, &PyDict_Type, &options))
        return NULL;
    profiler_close();
    if (!profiler.registry &&
        (tforge_registry_new(&profiler.registry) ||
         tforge_registry_load_search_path(profiler.registry, NULL, 0)))
        return profiler_error("the plugin registry");
    const tforge_plugin_record *record =
        tforge_registry_find(profiler.registry, TFORGE_PROFILER_INTERFACE_ID, id);
    profiler.api = record ? tforge_plugin_interface(record, TFORGE_PROFILER_INTERFACE_ID) : NULL;
    if (!profiler.api)
        return Py_BuildValue("is", TFORGE_ENOTFOUND,
                             tforge_error_last()->code == TFORGE_ENOTFOUND
                                 ? "no profiler plugin of that id in the plugin folders"
                                 : "the plugin does not speak " TFORGE_PROFILER_INTERFACE_ID);
    Py_ssize_t n = PyDict_Size(options), at = 0;
    const char **keys = calloc((size_t)n + 1, sizeof *keys);
    const char **values = calloc((size_t)n + 1, sizeof *values);
    PyObject *key, *value;
    uint32_t i = 0;
    while (keys && values && PyDict_Next(options, &at, &key, &value)) {
        keys[i] = PyUnicode_AsUTF8(key);
        values[i] = PyUnicode_AsUTF8(value);
        if (!keys[i] || !values[i])
            break;
        i++;
    }
    int rc;
    if (!keys || !values)
        rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    else if (PyErr_Occurred())
        rc = TFORGE_EINPUT; /* an option that is not text: Python's TypeError says so */
    else if (!(rc = tforge_plugin_check_options(record, keys, values, i))) {
        tforge_options_view given = {sizeof given, i, keys, values};
        tforge_profiler_input input = {sizeof input, device, 0, NULL};
        rc = profiler.api->create(&profiler.state, tforge_registry_host(), &given, &input);
    }
    free(keys);
    free(values);
    if (PyErr_Occurred())
        return NULL;
    if (rc != 0)
        profiler.state = NULL;
    return Py_BuildValue("is", rc, rc ? tforge_error_last()->message : "");
}

static void *profiler_state(void)
{
    if (!profiler.state)
        PyErr_SetString(PyExc_RuntimeError, "no profiler: create() first");
    return profiler.state;
}

static PyObject *profiler_passes(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return profiler_state() ? PyLong_FromUnsignedLong(profiler.api->passes(profiler.state))
                            : NULL;
}

static PyObject *profiler_pass(PyObject *args, int begin)
{
    unsigned pass;
    if (!PyArg_ParseTuple(args, "I", &pass) || !profiler_state())
        return NULL;
    int rc = begin ? profiler.api->begin(profiler.state, pass)
                   : profiler.api->end(profiler.state, pass);
    if (rc)
        return profiler_error(begin ? "begin" : "end");
    Py_RETURN_NONE;
}

static PyObject *profiler_begin(PyObject *self, PyObject *args)
{
    (void)self;
    return profiler_pass(args, 1);
}

static PyObject *profiler_end(PyObject *self, PyObject *args)
{
    (void)self;
    return profiler_pass(args, 0);
}

/* collect() -> {"counters": "ok" | "refused" | "failed" | "none", "note", "metrics"} */
static PyObject *profiler_collect(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    static const char *const states[] = {"none", "ok", "refused", "failed"};
    if (!profiler_state())
        return NULL;
    tforge_profile p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    if (profiler.api->collect(profiler.state, &p))
        return profiler_error("collect");
    PyObject *metrics = PyDict_New();
    for (uint32_t i = 0; metrics && i < p.n_metrics && i < TFORGE_PROFILE_METRICS; i++) {
        PyObject *v = PyFloat_FromDouble(p.metrics[i].value);
        if (!v || PyDict_SetItemString(metrics, p.metrics[i].name, v)) {
            Py_XDECREF(v);
            Py_CLEAR(metrics);
            break;
        }
        Py_DECREF(v);
    }
    if (!metrics)
        return NULL;
    p.note[sizeof p.note - 1] = '\0';
    return Py_BuildValue("{s:s,s:s,s:N}", "counters",
                         p.counters < 4 ? states[p.counters] : "failed", "note", p.note,
                         "metrics", metrics);
}

static PyObject *profiler_destroy(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    profiler_close();
    Py_RETURN_NONE;
}

static PyMethodDef profiler_methods[] = {
    {"create", profiler_create, METH_VARARGS,
     "create(id, device, options) -> (code, message): 0, 2 (counters refused) or an error"},
    {"passes", profiler_passes, METH_NOARGS, "replay passes the metric set needs"},
    {"begin", profiler_begin, METH_VARARGS, "begin(pass): before the candidate's launch"},
    {"end", profiler_end, METH_VARARGS, "end(pass): after the launch has synchronised"},
    {"collect", profiler_collect, METH_NOARGS, "the counters of the round, as a profile dict"},
    {"destroy", profiler_destroy, METH_NOARGS, "closes the profiler"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef profiler_module = {PyModuleDef_HEAD_INIT, "_tforge_profiler",
                                             "A profiler plugin of the engine's registry.", -1,
                                             profiler_methods, NULL, NULL, NULL, NULL};

static PyObject *profiler_init(void)
{
    return PyModule_Create(&profiler_module);
}

/* Starts the interpreter as if it were `executable`, so that a virtual environment's packages
 * are found, with our Python folder and TFORGE_PYTHONPATH first on sys.path. */
static int start_python(void)
{
    const char *executable = getenv("TFORGE_PYTHON");
    if (!executable || !executable[0])
        executable = TFORGE_PYTHON_EXECUTABLE;
    if (PyImport_AppendInittab("_tforge_profiler", profiler_init) < 0)
        return -1;
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0;
    PyStatus status = PyConfig_SetBytesString(&config, &config.executable, executable);
    if (!PyStatus_Exception(status))
        status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
        fprintf(stderr, "tforge worker: cannot start Python %s: %s\n", executable,
                status.err_msg ? status.err_msg : "?");
        return -1;
    }
    PyObject *path = PySys_GetObject("path"); /* borrowed */
    /* in order, as PYTHONPATH is: TFORGE_PYTHONPATH's folders, then ours, then the rest */
    const char *extra[2] = {getenv("TFORGE_PYTHONPATH"), TFORGE_PYTHON_DIR};
    Py_ssize_t at = 0;
    for (int i = 0; i < 2; i++) {
        if (!extra[i] || !extra[i][0])
            continue;
        char *copy = strdup(extra[i]), *save = NULL;
        for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
            PyObject *entry = PyUnicode_FromString(dir);
            PyList_Insert(path, at++, entry);
            Py_DECREF(entry);
        }
        free(copy);
    }
    return 0;
}

/* The dispatcher is Python, defined once: it turns any exception into an error response, its
 * class's name (the error's kind, "TaskError") and its message two fields. A lone surrogate (in
 * a user's exception text, a path that is not UTF-8) is no character and no JSON reader takes
 * its escape: such an answer is written again with each one a '?'. */
static const char dispatcher_source[] =
    "import importlib, json, traceback\n"
    "def answer(doc):\n"
    "    text = json.dumps(doc, allow_nan=True)\n"
    "    if '\\\\ud' in text:\n"
    "        text = json.dumps(doc, allow_nan=True, ensure_ascii=False)\n"
    "        text = text.encode('utf-8', 'replace').decode('utf-8')\n"
    "    return text\n"
    "def dispatch(text):\n"
    "    try:\n"
    "        request = json.loads(text)\n"
    "        module = importlib.import_module(request['module'])\n"
    "        result = getattr(module, request['function'])(**request.get('args', {}))\n"
    "        return answer({'ok': True, 'result': result})\n"
    "    except BaseException as e:\n"
    "        return answer({'ok': False, 'kind': type(e).__name__, 'error': str(e),\n"
    "                       'traceback': traceback.format_exc()})\n";

/* What the worker starts (a compiler, the user's own subprocesses) is in the worker's process
 * group and must not outlive it, though the worker may die by SIGKILL (with the engine: see
 * worker.c) and run nothing more. So the worker first forks a keeper, a process of the same
 * group that runs no user code: woken by PR_SET_PDEATHSIG when the worker is gone (its main
 * thread forked it, which ends only with the process), it kills the group, itself included.
 * Holding no file, it never keeps the engine's pipes open. Without it (fork failed) the worker
 * works as before. */
static void fork_keeper(void)
{
    pid_t worker = getpid();
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t keeper = fork();
    if (keeper != 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return;
    }
    long max_fd = sysconf(_SC_OPEN_MAX);
    for (long fd = 0; fd < (max_fd > 0 && max_fd < 65536 ? max_fd : 65536); fd++)
        close((int)fd);
    prctl(PR_SET_NAME, "tforge-keeper");
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0) {
        sigset_t wake;
        sigemptyset(&wake);
        sigaddset(&wake, SIGTERM);
        /* a SIGTERM sent by anyone else while the worker lives is not the worker's end */
        while (getppid() == worker)
            sigwaitinfo(&wake, NULL);
    }
    kill(0, SIGKILL);
    _exit(0);
}

int tforge_worker_child_main(void)
{
    fork_keeper();
    if (start_python())
        return 3;
    PyObject *globals = PyDict_New();
    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
    PyObject *ran = PyRun_String(dispatcher_source, Py_file_input, globals, globals);
    if (!ran) {
        PyErr_Print();
        return 3;
    }
    Py_DECREF(ran);
    PyObject *dispatch = PyDict_GetItemString(globals, "dispatch"); /* borrowed */
    /* Heavy imports happen before the ready frame: they are the worker's start, not a call's. */
    const char *preload = getenv("TFORGE_WORKER_PRELOAD");
    if (preload && preload[0]) {
        char *copy = strdup(preload), *save = NULL;
        for (char *m = strtok_r(copy, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
            PyObject *module = PyImport_ImportModule(m);
            if (!module)
                PyErr_Print(); /* the first call will fail and say why */
            Py_XDECREF(module);
        }
        free(copy);
    }
    if (tforge_frame_write(RESPONSE_FD, "", 0))
        return 4;
    int exit_status = 0;
    for (;;) {
        unsigned char h[4];
        if (tforge_frame_read_all(REQUEST_FD, h, 4))
            break; /* the engine closed the pipe: done */
        size_t n = tforge_frame_length(h);
        char *request = malloc(n + 1);
        if (!request || tforge_frame_read_all(REQUEST_FD, request, n)) {
            free(request);
            exit_status = 4;
            break;
        }
        request[n] = '\0';
        PyObject *answer = PyObject_CallFunction(dispatch, "s#", request, (Py_ssize_t)n);
        free(request);
        Py_ssize_t size = 0;
        const char *text = answer ? PyUnicode_AsUTF8AndSize(answer, &size) : NULL;
        int written = text ? tforge_frame_write(RESPONSE_FD, text, (size_t)size) : -1;
        if (!text)
            PyErr_Print();
        Py_XDECREF(answer);
        if (written) {
            exit_status = 4;
            break;
        }
    }
    Py_DECREF(globals);
    /* Triton and CUDA may keep threads: leave without running every finaliser. */
    fflush(stderr);
    _exit(exit_status);
}
