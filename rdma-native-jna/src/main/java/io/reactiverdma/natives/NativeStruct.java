package io.reactiverdma.natives;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a flyweight (or layout holder) for a C struct. The class must declare {@code public static final
 * int SIZE} equal to {@code sizeof(struct ...)}; each offset constant it uses is annotated
 * {@link NativeField}. {@code StructLayoutTest} compiles a C program against the installed headers and
 * fails on any difference.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface NativeStruct {
    /** The C type, for example {@code "struct ibv_wc"}. */
    String value();

    /** The header that declares it, for example {@code "infiniband/verbs.h"}. */
    String header();
}
