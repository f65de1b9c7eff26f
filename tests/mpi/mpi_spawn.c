/* MPI_Comm_spawn and MPI_Comm_get_parent as an unmodified MPI program uses them: the job's
 * processes (any count) spawn 2 copies of this program, which find their parents with
 * MPI_Comm_get_parent; data crosses the intercommunicator both ways (point-to-point, bcast,
 * allreduce) and MPI_Intercomm_merge joins both sides, the parents first; both sides end with
 * MPI_Comm_disconnect, which waits for a buffered and a freed send still on their way. The
 * parents print
 * "mpi_spawn: rank R: ..." and the children "mpi_spawn_child: rank R: ..." (report_checks). */
#define _DEFAULT_SOURCE /* realpath */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_checks.h"

enum { kChildren = 2 };

static int rank, size;

/* Parents give 1 each, children 10 each: each side gets the other's sum. */
static void cross(MPI_Comm inter, int is_child, int parents) {
  int value = is_child ? -1 : 42;
  const int root = is_child ? 0 : (rank == 0 ? MPI_ROOT : MPI_PROC_NULL);
  CHECK_OK(MPI_Bcast(&value, 1, MPI_INT, root, inter));
  CHECK(!is_child || value == 42);
  int mine = is_child ? 10 : 1, sum = 0;
  CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
  CHECK(sum == (is_child ? parents : 10 * kChildren));
  /* Child c and parent c swap their ranks. */
  if (rank < kChildren && rank < parents) {
    int theirs = -1;
    CHECK_OK(MPI_Sendrecv(&rank, 1, MPI_INT, rank, 3, &theirs, 1, MPI_INT, rank, 3, inter,
                          MPI_STATUS_IGNORE));
    CHECK(theirs == rank);
  }
  MPI_Comm merged;
  CHECK_OK(MPI_Intercomm_merge(inter, is_child, &merged));
  int merged_rank = -1, merged_size = 0;
  MPI_Comm_rank(merged, &merged_rank);
  MPI_Comm_size(merged, &merged_size);
  CHECK(merged_size == parents + kChildren);
  CHECK(merged_rank == (is_child ? parents : 0) + rank);
  CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, merged));
  CHECK(sum == parents + 10 * kChildren);
  CHECK_OK(MPI_Comm_free(&merged));
  /* Parent 0 sends child 0 a buffered message and one whose request it frees: both may still
   * be on their way when MPI_Comm_disconnect starts, which waits for them (MPI-4.1 11.10.4). */
  static char attached[2 * (sizeof(int) + MPI_BSEND_OVERHEAD)];
  int first = 7, second = 8;
  if (!is_child && rank == 0) {
    CHECK_OK(MPI_Buffer_attach(attached, sizeof attached));
    CHECK_OK(MPI_Bsend(&first, 1, MPI_INT, 0, 4, inter));
    MPI_Request freed;
    CHECK_OK(MPI_Isend(&second, 1, MPI_INT, 0, 5, inter, &freed));
    CHECK_OK(MPI_Request_free(&freed));
  } else if (is_child && rank == 0) {
    first = second = 0;
    CHECK_OK(MPI_Recv(&first, 1, MPI_INT, 0, 4, inter, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Recv(&second, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE));
    CHECK(first == 7 && second == 8);
  }
}

/* MPI_Comm_disconnect ends the intercommunicator on both sides: the handle becomes
 * MPI_COMM_NULL; COMM_WORLD is refused. */
static void disconnect(MPI_Comm* inter, int is_child) {
  CHECK_OK(MPI_Comm_disconnect(inter));
  CHECK(*inter == MPI_COMM_NULL);
  if (!is_child && rank == 0) {
    void* detached;
    int detached_size = 0;
    CHECK_OK(MPI_Buffer_detach(&detached, &detached_size));
  }
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(error_class_of(MPI_Comm_disconnect(&world)) == MPI_ERR_COMM);
  CHECK(world == MPI_COMM_WORLD);
}

/* MPI_Comm_spawn_multiple: 1 process of program 0 and 2 of program 1 (this program with other
 * arguments) in one MPI_COMM_WORLD, program 0's first; MPI_APPNUM tells each its program. Both
 * sides add up the appnums (0 + 1 + 1) across the intercommunicator. The info keys MPI reserves:
 * program 0 is named without a directory and found through "path" (its first directory does not
 * exist) and starts where its root runs; program 1 starts in "wdir" "..", relative to the root;
 * "host" is named on stderr as not used. */
enum { kMultiple = 3 };
static void spawn_multiple(char* program) {
  char absolute[4096], directory[4096];
  CHECK(realpath(program, absolute) != NULL);
  strcpy(directory, absolute);
  char* slash = strrchr(directory, '/');
  *slash = '\0';
  char path[4200], up_relative[4200], up[4096];
  snprintf(path, sizeof path, "/nonexistent-rft-dir:%s", directory);
  /* The parents move to the program's directory first: a spawn starts where the root is then,
   * and a relative "wdir" is relative to that, not to the launcher's directory. */
  CHECK(chdir(directory) == 0);
  snprintf(up_relative, sizeof up_relative, "%s/..", directory);
  CHECK(realpath(up_relative, up) != NULL);
  char* commands[2] = {slash + 1, absolute};
  char* args_a[] = {"child", "multi", "a", directory, NULL};
  char* args_b[] = {"child", "multi", "b", up, NULL};
  char** argvs[2] = {args_a, args_b};
  const int maxprocs[2] = {1, 2};
  MPI_Info infos[2];
  CHECK_OK(MPI_Info_create(&infos[0]));
  CHECK_OK(MPI_Info_create(&infos[1]));
  CHECK_OK(MPI_Info_set(infos[0], "path", path));
  CHECK_OK(MPI_Info_set(infos[0], "host", "localhost"));
  CHECK_OK(MPI_Info_set(infos[1], "wdir", ".."));
  int errcodes[kMultiple] = {-1, -1, -1};
  MPI_Comm inter;
  const int bad[2] = {1, 0}; /* a program with no process: refused at every member */
  CHECK(error_class_of(MPI_Comm_spawn_multiple(2, commands, argvs, rank == 0 ? bad : maxprocs,
                                               infos, 0, MPI_COMM_WORLD, &inter, errcodes)) ==
        MPI_ERR_ARG);
  /* A working directory that does not exist: refused at every member too. */
  MPI_Info missing;
  CHECK_OK(MPI_Info_dup(infos[1], &missing));
  CHECK_OK(MPI_Info_set(missing, "wdir", "/nonexistent-rft-dir"));
  MPI_Info bad_infos[2] = {infos[0], missing};
  CHECK(error_class_of(MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, bad_infos, 0,
                                               MPI_COMM_WORLD, &inter, errcodes)) == MPI_ERR_ARG);
  CHECK_OK(MPI_Info_free(&missing));
  /* The first children disconnected, but a spawn from MPI_COMM_WORLD waits until they have also
   * ended (rft: the spawned processes join the whole job; docs/mpi.md): refused uniformly with
   * MPI_ERR_ARG until then, so every member retries alike. */
  int rc, tries = 0;
  while ((rc = MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, infos, 0, MPI_COMM_WORLD,
                                       &inter, errcodes)) != MPI_SUCCESS &&
         error_class_of(rc) == MPI_ERR_ARG && ++tries < 400) {
    nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 25000000}, NULL);
  }
  CHECK_OK(rc);
  CHECK(errcodes[0] == MPI_SUCCESS && errcodes[1] == MPI_SUCCESS && errcodes[2] == MPI_SUCCESS);
  int remote = 0, zero = 0, sum = -1;
  CHECK_OK(MPI_Comm_remote_size(inter, &remote));
  CHECK(remote == kMultiple);
  CHECK_OK(MPI_Allreduce(&zero, &sum, 1, MPI_INT, MPI_SUM, inter));
  CHECK(sum == 2);
  CHECK_OK(MPI_Comm_disconnect(&inter));
  CHECK_OK(MPI_Info_free(&infos[0]));
  CHECK_OK(MPI_Info_free(&infos[1]));
}

static int multiple_child(MPI_Comm parent, const char* which, const char* directory) {
  CHECK(size == kMultiple);
  char here[4096];
  CHECK(getcwd(here, sizeof here) != NULL && strcmp(here, directory) == 0);
  int* appnum = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
  CHECK(flag && appnum != NULL && *appnum == (rank == 0 ? 0 : 1));
  CHECK(strcmp(which, rank == 0 ? "a" : "b") == 0);
  int sum = -1;
  CHECK_OK(MPI_Allreduce(appnum, &sum, 1, MPI_INT, MPI_SUM, parent));
  CHECK(sum == 0);
  CHECK_OK(MPI_Comm_disconnect(&parent));
  return report_checks("mpi_spawn_multiple_child");
}

static int child(MPI_Comm parent) {
  CHECK(size == kChildren);
  MPI_Comm again;
  CHECK_OK(MPI_Comm_get_parent(&again));
  CHECK(again == parent);
  char name[MPI_MAX_OBJECT_NAME];
  int length = 0;
  CHECK_OK(MPI_Comm_get_name(parent, name, &length));
  CHECK(strcmp(name, "MPI_COMM_PARENT") == 0); /* its default name (MPI, "Naming Objects") */
  int flag = 0, parents = 0, local = 0;
  CHECK_OK(MPI_Comm_test_inter(parent, &flag));
  CHECK_OK(MPI_Comm_remote_size(parent, &parents));
  CHECK_OK(MPI_Comm_size(parent, &local));
  CHECK(flag && local == kChildren && parents >= 1);
  cross(parent, 1, parents);
  disconnect(&parent, 1);
  CHECK_OK(MPI_Comm_get_parent(&again));
  CHECK(again == MPI_COMM_NULL); /* disconnected: MPI-4.1 11.8.2 */
  return report_checks("mpi_spawn_child");
}

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm parent;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  int status;
  if (parent != MPI_COMM_NULL && argc > 4 && strcmp(argv[2], "multi") == 0) {
    status = multiple_child(parent, argv[3], argv[4]);
  } else if (parent != MPI_COMM_NULL) {
    status = child(parent);
  } else {
    MPI_Comm inter;
    int errcodes[kChildren] = {-1, -1};
    char* args[] = {"child", NULL};
    /* A bad count at the root is refused at every member, and nothing starts. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(error_class_of(MPI_Comm_spawn(argv[0], args, rank == 0 ? -1 : kChildren, MPI_INFO_NULL, 0,
                                        MPI_COMM_WORLD, &inter, errcodes)) == MPI_ERR_ARG);
    CHECK_OK(MPI_Comm_spawn(argv[0], args, kChildren, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                            errcodes));
    CHECK(errcodes[0] == MPI_SUCCESS && errcodes[1] == MPI_SUCCESS);
    int flag = 0, remote = 0;
    CHECK_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK_OK(MPI_Comm_remote_size(inter, &remote));
    CHECK(flag && remote == kChildren);
    cross(inter, 0, size);
    disconnect(&inter, 0);
    spawn_multiple(argv[0]);
    status = report_checks("mpi_spawn");
  }
  MPI_Finalize();
  return status;
}
