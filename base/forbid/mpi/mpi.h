/*
 * mpi.h, as the layers below runtime/ see it.  runtime/ is the only code
 * that calls MPI (docs/architecture.md): meson puts this folder first on
 * the include path of every other layer, so an #include <mpi.h> there
 * stops the build here instead of finding Open MPI's header.
 */
/* The message stays on one line, as the compiler prints it. */
/* clang-format off */
#error "only runtime/ may include mpi.h: this layer plans, it does not run (docs/architecture.md)"
/* clang-format on */
