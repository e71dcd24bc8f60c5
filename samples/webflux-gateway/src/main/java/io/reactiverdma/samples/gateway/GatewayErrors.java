package io.reactiverdma.samples.gateway;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.samples.kv.KvException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import java.util.concurrent.TimeoutException;

/**
 * Maps the key-value client's typed failures to HTTP statuses, as RFC 9457 problem details whose
 * {@code detail} is the failure's own message and whose {@code reason} (when there is one) is its typed
 * reason. Errors after a streamed download started cannot change its status: the response is cut off.
 */
@RestControllerAdvice
public class GatewayErrors {
    private static final Log log = LogFactory.getLog(GatewayErrors.class);

    /** The status for a failure of a key-value operation; null: not one this gateway knows (Spring's default). */
    static HttpStatus statusOf(Throwable t) {
        if (t instanceof KeyNotFoundException) {
            return HttpStatus.NOT_FOUND;
        }
        if (t instanceof KvException e) {
            return switch (e.reason()) {
                case NOT_FOUND -> HttpStatus.NOT_FOUND;
                case KEY_TOO_LONG, ILLEGAL_ARGUMENT -> HttpStatus.BAD_REQUEST;
                case VALUE_TOO_LARGE -> HttpStatus.PAYLOAD_TOO_LARGE;
                case TABLE_FULL, VALUE_AREA_FULL, COUNTERS_FULL -> HttpStatus.INSUFFICIENT_STORAGE;
                case CONCURRENT_MODIFICATION -> HttpStatus.CONFLICT;
                case PROTOCOL, SERVER_ERROR -> HttpStatus.BAD_GATEWAY;
                case BUSY -> HttpStatus.SERVICE_UNAVAILABLE; // the gateway's own limit: retry later
            };
        }
        if (t instanceof DataBufferLimitException) {
            return HttpStatus.PAYLOAD_TOO_LARGE;
        }
        if (t instanceof GatewayUnavailableException || t instanceof RdmaConnectException
                || t instanceof ConnectionClosedException) {
            return HttpStatus.SERVICE_UNAVAILABLE; // no connection now: worth retrying later
        }
        if (t instanceof InvalidRequestException e) {
            return switch (e.reason()) {
                case MESSAGE_TOO_LARGE -> HttpStatus.PAYLOAD_TOO_LARGE;
                default -> HttpStatus.INTERNAL_SERVER_ERROR; // a request the gateway should not have made
            };
        }
        if (t instanceof RdmaException) {
            return HttpStatus.BAD_GATEWAY; // the RDMA operation failed (a completion error ...)
        }
        if (t instanceof TimeoutException) {
            return HttpStatus.GATEWAY_TIMEOUT;
        }
        return null;
    }

    @ExceptionHandler({KeyNotFoundException.class, KvException.class, DataBufferLimitException.class,
            GatewayUnavailableException.class, RdmaException.class, TimeoutException.class})
    public ResponseEntity<ProblemDetail> handle(Exception e) {
        HttpStatus status = statusOf(e);
        if (status == null) {
            status = HttpStatus.INTERNAL_SERVER_ERROR;
        }
        if (status.is5xxServerError()) {
            log.warn("key-value request failed: " + e);
        }
        String detail = e instanceof TimeoutException
                ? "the key-value server did not answer within gateway.request-timeout" : e.getMessage();
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setTitle(status.getReasonPhrase());
        if (e instanceof KvException kv) {
            problem.setProperty("reason", kv.reason().name());
        } else if (e instanceof InvalidRequestException ir) {
            problem.setProperty("reason", ir.reason().name());
        }
        problem.setProperty("exception", e.getClass().getSimpleName());
        ResponseEntity.BodyBuilder response = ResponseEntity.status(status);
        long retryAfter = retryAfterSeconds(e);
        if (retryAfter > 0) {
            response.header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
        }
        return response.body(problem);
    }

    /** Seconds a client should wait before retrying, or 0 when there is nothing to say. */
    static long retryAfterSeconds(Throwable e) {
        if (e instanceof GatewayUnavailableException u && u.retryAfter() != null) {
            return Math.max(1, (u.retryAfter().toMillis() + 999) / 1000);
        }
        if (e instanceof KvException kv && kv.reason() == KvException.Reason.BUSY) {
            return 1;
        }
        return 0;
    }
}
