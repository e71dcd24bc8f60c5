package io.reactiverdma.natives;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Review finding 12 (native layer): the layouts are x86-64 Linux's, so a jar built there must refuse to run
 * elsewhere (isAvailable() false, unavailabilityCause() naming the platform) instead of using wrong offsets.
 */
class PlatformGuardTest {
    @Test
    void anotherArchitectureIsRefusedAndNamed() {
        String why = RdmaNative.platformProblem("Linux", "aarch64");
        assertTrue(why != null && why.contains("aarch64") && why.contains("x86-64"), why);
        assertTrue(RdmaNative.platformProblem("Mac OS X", "x86_64") != null);
    }

    @Test
    void x8664LinuxIsAccepted() {
        assertNull(RdmaNative.platformProblem("Linux", "amd64"));
        assertNull(RdmaNative.platformProblem("Linux", "x86_64"));
    }
}
