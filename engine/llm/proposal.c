/* A model's answers asked for and checked in a fresh worker (proposal.h). */
#include "proposal.h"

#include "rpc.h"
#include "tforge/error.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static char *copy(const char *text)
{
    return text ? strdup(text) : NULL;
}

/* `answer`'s text checked by the worker into `p` (accepted, or refused with the reason). */
static int check(tforge_proposal *p, const tforge_proposal_request *r)
{
    cJSON *got = tforge_rpc_fresh("checking the model's answer",
                                  tforge_rpc_check_answer(p->answer, r->kernel, r->source),
                                  r->worker_env, r->timeout_ms);
    if (!got)
        return tforge_error_last()->code;
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(got, "status");
    const cJSON *source = cJSON_GetObjectItemCaseSensitive(got, "source");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(got, "reason");
    int rc = 0;
    if (!cJSON_IsString(status) || !cJSON_IsString(reason))
        rc = tforge_error_set(TFORGE_ERROR, "checking the model's answer: expected a status and "
                                            "a reason in the worker's answer");
    else if (strcmp(status->valuestring, "ok") == 0 && cJSON_IsString(source)) {
        p->state = TFORGE_PROPOSAL_ACCEPTED;
        if (!(p->source = strdup(source->valuestring)))
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        else
            tforge_digest_text(p->digest, p->source, strlen(p->source));
    } else {
        p->state = TFORGE_PROPOSAL_REFUSED;
        if (!(p->reason = strdup(reason->valuestring)))
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    cJSON_Delete(got);
    return rc;
}

int tforge_proposal_ask(tforge_proposal **out, size_t *n, const tforge_proposal_request *r)
{
    *out = NULL;
    *n = 0;
    tforge_llm_request request = {sizeof request, r->system, r->user,
                                  r->answers ? r->answers : 1, r->seed};
    const tforge_llm_answer *answers = NULL;
    uint32_t got = 0;
    tforge_error_clear();
    int rc = r->llm->complete(r->llm_state, &request, &answers, &got);
    if (rc < 0)
        return tforge_error_set(TFORGE_EINPUT, "the model could not be asked: %s",
                                got == 1 && answers && answers[0].error ? answers[0].error
                                                                       : "(no reason given)");
    if (got == 0 || got > request.answers || !answers)
        return tforge_error_set(TFORGE_ERROR, "the model's plugin gave %u answers for %u asked",
                                got, request.answers);
    tforge_proposal *p = calloc(got, sizeof *p);
    if (!p)
        return tforge_error_set(TFORGE_ENOMEM, "out of memory");
    /* the answers' texts are the plugin's until its next call: copied first */
    for (uint32_t i = 0; i < got && !rc; i++) {
        const tforge_llm_answer *a = &answers[i];
        p[i].prompt_tokens = a->prompt_tokens;
        p[i].completion_tokens = a->completion_tokens;
        p[i].seconds = a->seconds;
        if (a->text) {
            if (!(p[i].answer = copy(a->text)))
                rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
        } else if (!(p[i].reason = copy(a->error ? a->error : "no answer and no reason")))
            rc = tforge_error_set(TFORGE_ENOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < got && !rc; i++)
        if (p[i].answer)
            rc = check(&p[i], r);
    if (rc) {
        tforge_proposals_free(p, got);
        return rc;
    }
    *out = p;
    *n = got;
    return 0;
}

void tforge_proposals_free(tforge_proposal *proposals, size_t n)
{
    for (size_t i = 0; proposals && i < n; i++) {
        free(proposals[i].reason);
        free(proposals[i].answer);
        free(proposals[i].source);
    }
    free(proposals);
}

char *tforge_proposal_diagnosis(const tforge_proposal *proposal)
{
    const char *text = proposal->answer ? proposal->answer : "";
    const char *fence = strstr(text, "```");
    size_t n = fence ? (size_t)(fence - text) : strlen(text);
    if (!fence && proposal->state == TFORGE_PROPOSAL_ACCEPTED)
        n = 0; /* a bare answer that was the code: no words of its own */
    while (n && isspace((unsigned char)text[n - 1]))
        n--;
    while (n && isspace((unsigned char)*text))
        text++, n--;
    return strndup(text, n);
}
