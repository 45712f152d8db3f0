/* Binding a function of ours to a versioned name of the drop-in library's ABI. */
#ifndef SV_V_SYMVER_H
#define SV_V_SYMVER_H

/* SV_SYMVER(fn, "name@VERSION"); after fn's definition. GCC (10 on) takes it as an attribute,
 * which survives link-time optimisation: a toplevel .symver directive does not (LTO emits the
 * function in another unit and the directive binds nothing, so the versioned name is missing
 * from the library). Compilers without the attribute (clang 14) get the directive. */
#if defined(__has_attribute)
#if __has_attribute(symver)
#define SV_SYMVER(fn, versioned) extern __typeof__(fn) fn __attribute__((symver(versioned)))
#endif
#endif
#ifndef SV_SYMVER
#define SV_SYMVER(fn, versioned) __asm__(".symver " #fn ", " versioned)
#endif

#endif
