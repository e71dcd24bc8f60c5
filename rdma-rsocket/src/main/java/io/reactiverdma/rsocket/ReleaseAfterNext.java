package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * Releases each received frame once RSocket's {@code onNext} returned, as rsocket-java 1.1 expects of a
 * transport (what it keeps, it has retained).
 */
final class ReleaseAfterNext implements CoreSubscriber<ByteBuf>, Subscription {
    private final CoreSubscriber<? super ByteBuf> actual;
    private Subscription upstream;

    ReleaseAfterNext(CoreSubscriber<? super ByteBuf> actual) {
        this.actual = actual;
    }

    @Override
    public Context currentContext() {
        return actual.currentContext();
    }

    @Override
    public void onSubscribe(Subscription s) {
        if (Operators.validate(upstream, s)) {
            upstream = s;
            actual.onSubscribe(this);
        }
    }

    @Override
    public void onNext(ByteBuf frame) {
        try {
            actual.onNext(frame);
        } finally {
            frame.release();
        }
    }

    @Override
    public void onError(Throwable t) {
        actual.onError(t);
    }

    @Override
    public void onComplete() {
        actual.onComplete();
    }

    @Override
    public void request(long n) {
        upstream.request(n);
    }

    @Override
    public void cancel() {
        upstream.cancel();
    }
}
