package io.reactiverdma.reactive.impl.verbs;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Review finding 8 (native layer): when a provider refuses a chain without naming the bad request
 * ({@code *bad_wr} left NULL), it may have queued all of it: rxe's post_send queues every request, then
 * rings the doorbell and returns that write's error with bad_wr unset. "Nothing posted" let the engine
 * recycle buffers the device could still read; the requests are taken as posted, so their buffers wait for
 * their completions or flushes (the close's drain timeout bounds the wait if none comes).
 */
class PostRefusedExceptionTest {
    @Test
    void aRefusalThatNamesNoRequestCountsTheWholeChainAsPosted() {
        assertEquals(5, PostRefusedException.firstNotPosted(-1, 5));
    }

    @Test
    void aNamedRequestIsTheFirstNotPosted() {
        assertEquals(0, PostRefusedException.firstNotPosted(0, 5));
        assertEquals(3, PostRefusedException.firstNotPosted(3, 5));
    }
}
