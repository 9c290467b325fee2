/*
 * yaml.h, as the layers that may not read YAML see it.  io/ holds the one
 * YAML document reader, and yaml/ (the spec's front end) and cost/ (the
 * machine profile) read through it; ir/, layout/, ops/ and the layers
 * above them never see libyaml (docs/architecture.md).  meson puts this
 * folder first on their include path, so an #include <yaml.h> there
 * stops the build here instead of finding libyaml's header.
 */
/* The message stays on one line, as the compiler prints it. */
/* clang-format off */
#error "only io/, yaml/ and cost/ may include yaml.h: the program (ir/) and the planner have no YAML in them (docs/architecture.md)"
/* clang-format on */
