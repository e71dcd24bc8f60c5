package io.reactiverdma.natives;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a {@code static final int} constant as {@code offsetof(<struct>, <member>)} of the enclosing
 * {@link NativeStruct}. The member may be a nested designator ({@code "wr.rdma.remote_addr"}).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface NativeField {
    /** The member designator, as written inside {@code offsetof()}. */
    String value();
}
