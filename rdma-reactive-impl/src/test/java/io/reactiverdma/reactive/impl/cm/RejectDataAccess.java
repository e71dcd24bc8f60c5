package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;

/** For tests outside the package: how a client reads a REJECTED event. */
public final class RejectDataAccess {
    private RejectDataAccess() {
    }

    public static ConnectionRejectedException decode(CmEventInfo rejected) {
        return RejectData.decode("test", rejected.status(), rejected.privateData());
    }
}
