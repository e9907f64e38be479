/* The worker's side: embeds CPython (the only file that does) and answers framed JSON requests
 * by calling `module.function(**args)`. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "frame.h"
#include "worker.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TFORGE_PYTHON_EXECUTABLE
#define TFORGE_PYTHON_EXECUTABLE "python3"
#endif
#ifndef TFORGE_PYTHON_DIR
#define TFORGE_PYTHON_DIR ""
#endif

enum { REQUEST_FD = 3, RESPONSE_FD = 4 };

/* Starts the interpreter as if it were `executable`, so that a virtual environment's packages
 * are found, with our Python folder and TFORGE_PYTHONPATH first on sys.path. */
static int start_python(void)
{
    const char *executable = getenv("TFORGE_PYTHON");
    if (!executable || !executable[0])
        executable = TFORGE_PYTHON_EXECUTABLE;
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

/* The dispatcher is Python, defined once: it turns any exception into an error response. */
static const char dispatcher_source[] =
    "import importlib, json, traceback\n"
    "def dispatch(text):\n"
    "    try:\n"
    "        request = json.loads(text)\n"
    "        module = importlib.import_module(request['module'])\n"
    "        result = getattr(module, request['function'])(**request.get('args', {}))\n"
    "        return json.dumps({'ok': True, 'result': result}, allow_nan=True)\n"
    "    except BaseException as e:\n"
    "        return json.dumps({'ok': False, 'error': f'{type(e).__name__}: {e}',\n"
    "                           'traceback': traceback.format_exc()})\n";

int tforge_worker_child_main(void)
{
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
