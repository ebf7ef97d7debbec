/*
 * queue_tb.h - private to queue.c: the time-bucket queue (a heap of
 * distinct times, each with a FIFO of its events).  See queue_tb.c.
 */
#ifndef CS_QUEUE_TB_H
#define CS_QUEUE_TB_H

#include "core/queue.h"

typedef struct cs_tbq cs_tbq_t;

cs_tbq_t *cs_tbq_new(void);
void cs_tbq_free(cs_tbq_t *q);
void cs_tbq_push(cs_tbq_t *q, const cs_event_t *e);
int cs_tbq_pop(cs_tbq_t *q, cs_event_t *out);
int cs_tbq_peek(const cs_tbq_t *q, cs_event_t *out);

#endif
