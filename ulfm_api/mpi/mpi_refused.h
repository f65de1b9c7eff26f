/* mpi_refused.h: functions rft's MPI layer exports so that programs which mention them link, and
 * refuses when called: each returns MPI_ERR_UNSUPPORTED_OPERATION through COMM_WORLD's error
 * handler, with a message naming the function (docs/mpi.md says why each is refused). Included
 * by mpi.h and by the library, as mpi_functions.h is. No include guard, on purpose. */

/* Processes: connecting separately started jobs (docs/mpi.md, "Not yet"). */
RFT_MPI_DECLARE(int, Open_port, (MPI_Info info, char* port_name))
RFT_MPI_DECLARE(int, Close_port, (const char* port_name))
RFT_MPI_DECLARE(int, Comm_accept,
                (const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Comm_connect,
                (const char* port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Comm_join, (int fd, MPI_Comm* intercomm))

/* One-sided communication (windows). */
RFT_MPI_DECLARE(int, Win_create,
                (void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                 MPI_Win* win))
RFT_MPI_DECLARE(int, Win_allocate,
                (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                 MPI_Win* win))
RFT_MPI_DECLARE(int, Win_free, (MPI_Win * win))
RFT_MPI_DECLARE(int, Win_fence, (int assert, MPI_Win win))
RFT_MPI_DECLARE(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
RFT_MPI_DECLARE(int, Win_unlock, (int rank, MPI_Win win))
RFT_MPI_DECLARE(int, Put,
                (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                 int target_rank, MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Win win))
RFT_MPI_DECLARE(int, Get,
                (void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                 MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
RFT_MPI_DECLARE(int, Accumulate,
                (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                 int target_rank, MPI_Aint target_disp, int target_count,
                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))

/* Files (MPI-IO). */
RFT_MPI_DECLARE(int, File_open,
                (MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh))
RFT_MPI_DECLARE(int, File_close, (MPI_File * fh))

/* Graph topologies. */
RFT_MPI_DECLARE(int, Graph_create,
                (MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder,
                 MPI_Comm* comm_graph))
RFT_MPI_DECLARE(int, Dist_graph_create_adjacent,
                (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                 int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                 int reorder, MPI_Comm* comm_dist_graph))

/* Sessions (MPI-4). */
RFT_MPI_DECLARE(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session))
RFT_MPI_DECLARE(int, Session_finalize, (MPI_Session * session))
