// Package procgroup starts a program in a process group of its own and
// signals the group, so that what the program starts in turn (a wrapper's
// real server, a script's children) is stopped with it. On systems without
// process groups (Windows) it signals the program alone.
package procgroup
