/* The code of the canned "good" model answer (tests/fixtures/llm/answers.json, its first entry):
 * a proposal its checks accept. The including test defines `check` (fail on a non-zero rc). */
#ifndef TFORGE_TESTS_CANNED_ANSWER_H
#define TFORGE_TESTS_CANNED_ANSWER_H

#include "file.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static char *good_source(void)
{
    char *text = NULL;
    size_t size = 0;
    check(tforge_file_read(&text, &size, TFORGE_SOURCE_DIR "/tests/fixtures/llm/answers.json"));
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *good = cJSON_GetArrayItem(doc, 0);
    const char *answer = cJSON_GetObjectItemCaseSensitive(good, "text")->valuestring;
    const char *from = strstr(answer, "```python\n") + strlen("```python\n");
    char *code = strndup(from, (size_t)(strstr(from, "```") - from));
    cJSON_Delete(doc);
    return code;
}

#endif
