/* mpi_functions.h: every function of rft's MPI layer, one line each, for mpi.h (which declares
 * each as MPI_X and PMPI_X) and for the library that defines them. Not included on its own:
 * RFT_MPI_DECLARE(return type, name without MPI_, parameters) and RFT_MPIX_DECLARE (the same for
 * MPIX_ names) are defined by the includer.
 * No include guard, on purpose. */

/* Start and end, environment */
RFT_MPI_DECLARE(int, Init, (int* argc, char*** argv))
RFT_MPI_DECLARE(int, Init_thread, (int* argc, char*** argv, int required, int* provided))
RFT_MPI_DECLARE(int, Initialized, (int* flag))
RFT_MPI_DECLARE(int, Finalized, (int* flag))
RFT_MPI_DECLARE(int, Finalize, (void))
RFT_MPI_DECLARE(int, Abort, (MPI_Comm comm, int errorcode))
RFT_MPI_DECLARE(int, Query_thread, (int* provided))
RFT_MPI_DECLARE(int, Is_thread_main, (int* flag))
RFT_MPI_DECLARE(int, Get_version, (int* version, int* subversion))
RFT_MPI_DECLARE(int, Get_library_version, (char* version, int* resultlen))
RFT_MPI_DECLARE(int, Get_processor_name, (char* name, int* resultlen))
RFT_MPI_DECLARE(double, Wtime, (void))
RFT_MPI_DECLARE(double, Wtick, (void))
RFT_MPI_DECLARE(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr))
RFT_MPI_DECLARE(int, Free_mem, (void* base))
RFT_MPI_DECLARE(int, Pcontrol, (const int level, ...))

/* Errors */
RFT_MPI_DECLARE(int, Error_class, (int errorcode, int* errorclass))
RFT_MPI_DECLARE(int, Error_string, (int errorcode, char* string, int* resultlen))
RFT_MPI_DECLARE(int, Add_error_class, (int* errorclass))
RFT_MPI_DECLARE(int, Add_error_code, (int errorclass, int* errorcode))
RFT_MPI_DECLARE(int, Add_error_string, (int errorcode, const char* string))
RFT_MPI_DECLARE(int, Comm_create_errhandler,
                (MPI_Comm_errhandler_function * function, MPI_Errhandler* errhandler))
RFT_MPI_DECLARE(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
RFT_MPI_DECLARE(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler* errhandler))
RFT_MPI_DECLARE(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
RFT_MPI_DECLARE(int, Errhandler_free, (MPI_Errhandler * errhandler))
RFT_MPI_DECLARE(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
RFT_MPI_DECLARE(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler* errhandler))

/* Info */
RFT_MPI_DECLARE(int, Info_create, (MPI_Info * info))
RFT_MPI_DECLARE(int, Info_set, (MPI_Info info, const char* key, const char* value))
RFT_MPI_DECLARE(int, Info_get,
                (MPI_Info info, const char* key, int valuelen, char* value, int* flag))
RFT_MPI_DECLARE(int, Info_get_valuelen, (MPI_Info info, const char* key, int* valuelen, int* flag))
RFT_MPI_DECLARE(int, Info_get_string,
                (MPI_Info info, const char* key, int* buflen, char* value, int* flag))
RFT_MPI_DECLARE(int, Info_get_nkeys, (MPI_Info info, int* nkeys))
RFT_MPI_DECLARE(int, Info_get_nthkey, (MPI_Info info, int n, char* key))
RFT_MPI_DECLARE(int, Info_delete, (MPI_Info info, const char* key))
RFT_MPI_DECLARE(int, Info_dup, (MPI_Info info, MPI_Info* newinfo))
RFT_MPI_DECLARE(int, Info_free, (MPI_Info * info))

/* Communicators */
RFT_MPI_DECLARE(int, Comm_rank, (MPI_Comm comm, int* rank))
RFT_MPI_DECLARE(int, Comm_size, (MPI_Comm comm, int* size))
RFT_MPI_DECLARE(int, Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Comm_split_type,
                (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Comm_create_group,
                (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Comm_free, (MPI_Comm * comm))
RFT_MPI_DECLARE(int, Comm_disconnect, (MPI_Comm * comm))
RFT_MPI_DECLARE(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int* result))
RFT_MPI_DECLARE(int, Comm_group, (MPI_Comm comm, MPI_Group* group))
RFT_MPI_DECLARE(int, Comm_set_name, (MPI_Comm comm, const char* comm_name))
RFT_MPI_DECLARE(int, Comm_get_name, (MPI_Comm comm, char* comm_name, int* resultlen))
RFT_MPI_DECLARE(int, Comm_test_inter, (MPI_Comm comm, int* flag))
RFT_MPI_DECLARE(int, Intercomm_create,
                (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                 int tag, MPI_Comm* newintercomm))
RFT_MPI_DECLARE(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm))
RFT_MPI_DECLARE(int, Comm_spawn,
                (const char* command, char* argv[], int maxprocs, MPI_Info info, int root,
                 MPI_Comm comm, MPI_Comm* intercomm, int array_of_errcodes[]))
RFT_MPI_DECLARE(int, Comm_spawn_multiple,
                (int count, char* array_of_commands[], char** array_of_argv[],
                 const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                 MPI_Comm comm, MPI_Comm* intercomm, int array_of_errcodes[]))
RFT_MPI_DECLARE(int, Comm_get_parent, (MPI_Comm * parent))
RFT_MPI_DECLARE(int, Comm_remote_size, (MPI_Comm comm, int* size))
RFT_MPI_DECLARE(int, Comm_remote_group, (MPI_Comm comm, MPI_Group* group))
RFT_MPI_DECLARE(int, Comm_get_attr,
                (MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag))
RFT_MPI_DECLARE(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val))
RFT_MPI_DECLARE(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
RFT_MPI_DECLARE(int, Comm_create_keyval,
                (MPI_Comm_copy_attr_function * comm_copy_attr_fn,
                 MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval,
                 void* extra_state))
RFT_MPI_DECLARE(int, Comm_free_keyval, (int* comm_keyval))
RFT_MPI_DECLARE(int, Attr_get, (MPI_Comm comm, int keyval, void* attribute_val, int* flag))
RFT_MPI_DECLARE(int, Attr_put, (MPI_Comm comm, int keyval, void* attribute_val))
RFT_MPI_DECLARE(int, Attr_delete, (MPI_Comm comm, int keyval))
RFT_MPI_DECLARE(int, Keyval_create,
                (MPI_Copy_function * copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                 void* extra_state))
RFT_MPI_DECLARE(int, Keyval_free, (int* keyval))
RFT_MPI_DECLARE(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
RFT_MPI_DECLARE(int, Comm_get_info, (MPI_Comm comm, MPI_Info* info_used))

/* Groups */
RFT_MPI_DECLARE(int, Group_size, (MPI_Group group, int* size))
RFT_MPI_DECLARE(int, Group_rank, (MPI_Group group, int* rank))
RFT_MPI_DECLARE(int, Group_translate_ranks,
                (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]))
RFT_MPI_DECLARE(int, Group_compare, (MPI_Group group1, MPI_Group group2, int* result))
RFT_MPI_DECLARE(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
RFT_MPI_DECLARE(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
RFT_MPI_DECLARE(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
RFT_MPI_DECLARE(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup))
RFT_MPI_DECLARE(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup))
RFT_MPI_DECLARE(int, Group_range_incl,
                (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup))
RFT_MPI_DECLARE(int, Group_range_excl,
                (MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup))
RFT_MPI_DECLARE(int, Group_free, (MPI_Group * group))

/* Point-to-point */
RFT_MPI_DECLARE(int, Send,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm))
RFT_MPI_DECLARE(int, Ssend,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm))
RFT_MPI_DECLARE(int, Rsend,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm))
RFT_MPI_DECLARE(int, Bsend,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm))
RFT_MPI_DECLARE(int, Buffer_attach, (void* buffer, int size))
RFT_MPI_DECLARE(int, Buffer_detach, (void* buffer_addr, int* size))
RFT_MPI_DECLARE(int, Recv,
                (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Status* status))
RFT_MPI_DECLARE(int, Isend,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Issend,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Irsend,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Ibsend,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Irecv,
                (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Request* request))
RFT_MPI_DECLARE(int, Sendrecv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status))
RFT_MPI_DECLARE(int, Sendrecv_replace,
                (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                 int recvtag, MPI_Comm comm, MPI_Status* status))
RFT_MPI_DECLARE(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status))
RFT_MPI_DECLARE(int, Iprobe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status))
RFT_MPI_DECLARE(int, Mprobe,
                (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status))
RFT_MPI_DECLARE(int, Improbe,
                (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                 MPI_Status* status))
RFT_MPI_DECLARE(int, Mrecv,
                (void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                 MPI_Status* status))
RFT_MPI_DECLARE(int, Imrecv,
                (void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                 MPI_Request* request))
RFT_MPI_DECLARE(int, Send_init,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Ssend_init,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Rsend_init,
                (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Recv_init,
                (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Request* request))
RFT_MPI_DECLARE(int, Start, (MPI_Request * request))
RFT_MPI_DECLARE(int, Startall, (int count, MPI_Request array_of_requests[]))

/* Requests */
RFT_MPI_DECLARE(int, Wait, (MPI_Request * request, MPI_Status* status))
RFT_MPI_DECLARE(int, Test, (MPI_Request * request, int* flag, MPI_Status* status))
RFT_MPI_DECLARE(int, Waitall,
                (int count, MPI_Request array_of_requests[], MPI_Status* array_of_statuses))
RFT_MPI_DECLARE(int, Testall,
                (int count, MPI_Request array_of_requests[], int* flag,
                 MPI_Status* array_of_statuses))
RFT_MPI_DECLARE(int, Waitany,
                (int count, MPI_Request array_of_requests[], int* index, MPI_Status* status))
RFT_MPI_DECLARE(int, Testany,
                (int count, MPI_Request array_of_requests[], int* index, int* flag,
                 MPI_Status* status))
RFT_MPI_DECLARE(int, Waitsome,
                (int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status* array_of_statuses))
RFT_MPI_DECLARE(int, Testsome,
                (int incount, MPI_Request array_of_requests[], int* outcount,
                 int array_of_indices[], MPI_Status* array_of_statuses))
RFT_MPI_DECLARE(int, Cancel, (MPI_Request * request))
RFT_MPI_DECLARE(int, Test_cancelled, (const MPI_Status* status, int* flag))
RFT_MPI_DECLARE(int, Request_free, (MPI_Request * request))
RFT_MPI_DECLARE(int, Request_get_status, (MPI_Request request, int* flag, MPI_Status* status))
RFT_MPI_DECLARE(int, Get_count, (const MPI_Status* status, MPI_Datatype datatype, int* count))
RFT_MPI_DECLARE(int, Get_elements, (const MPI_Status* status, MPI_Datatype datatype, int* count))
RFT_MPI_DECLARE(int, Get_elements_x,
                (const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count))
RFT_MPI_DECLARE(int, Status_set_elements, (MPI_Status * status, MPI_Datatype datatype, int count))
RFT_MPI_DECLARE(int, Status_set_cancelled, (MPI_Status * status, int flag))

/* Collectives */
RFT_MPI_DECLARE(int, Barrier, (MPI_Comm comm))
RFT_MPI_DECLARE(int, Bcast,
                (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
RFT_MPI_DECLARE(int, Reduce,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm))
RFT_MPI_DECLARE(int, Allreduce,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm))
RFT_MPI_DECLARE(int, Reduce_local,
                (const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))
RFT_MPI_DECLARE(int, Reduce_scatter_block,
                (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm))
RFT_MPI_DECLARE(int, Reduce_scatter,
                (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm))
RFT_MPI_DECLARE(int, Scan,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm))
RFT_MPI_DECLARE(int, Exscan,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm))
RFT_MPI_DECLARE(int, Gather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
RFT_MPI_DECLARE(int, Gatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm))
RFT_MPI_DECLARE(int, Scatter,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
RFT_MPI_DECLARE(int, Scatterv,
                (const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm))
RFT_MPI_DECLARE(int, Allgather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
RFT_MPI_DECLARE(int, Allgatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
RFT_MPI_DECLARE(int, Alltoall,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
RFT_MPI_DECLARE(int, Alltoallv,
                (const void* sendbuf, const int sendcounts[], const int sdispls[],
                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm))
RFT_MPI_DECLARE(int, Alltoallw,
                (const void* sendbuf, const int sendcounts[], const int sdispls[],
                 const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                 const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
RFT_MPI_DECLARE(int, Ibarrier, (MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Ibcast,
                (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 MPI_Request* request))
RFT_MPI_DECLARE(int, Ireduce,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Iallreduce,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Igather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request))
RFT_MPI_DECLARE(int, Iscatter,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request))
RFT_MPI_DECLARE(int, Iallgather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Ialltoall,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Igatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Iscatterv,
                (const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Iallgatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                 MPI_Request* request))
RFT_MPI_DECLARE(int, Ialltoallv,
                (const void* sendbuf, const int sendcounts[], const int sdispls[],
                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Ialltoallw,
                (const void* sendbuf, const int sendcounts[], const int sdispls[],
                 const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                 const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                 MPI_Request* request))
RFT_MPI_DECLARE(int, Ireduce_scatter,
                (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Ireduce_scatter_block,
                (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Iscan,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request))
RFT_MPI_DECLARE(int, Iexscan,
                (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request))

/* Operators */
RFT_MPI_DECLARE(int, Op_create, (MPI_User_function * user_fn, int commute, MPI_Op* op))
RFT_MPI_DECLARE(int, Op_free, (MPI_Op * op))
RFT_MPI_DECLARE(int, Op_commutative, (MPI_Op op, int* commute))

/* Datatypes */
RFT_MPI_DECLARE(int, Type_size, (MPI_Datatype datatype, int* size))
RFT_MPI_DECLARE(int, Type_size_x, (MPI_Datatype datatype, MPI_Count* size))
RFT_MPI_DECLARE(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent))
RFT_MPI_DECLARE(int, Type_get_true_extent,
                (MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent))
RFT_MPI_DECLARE(int, Type_extent, (MPI_Datatype datatype, MPI_Aint* extent))
RFT_MPI_DECLARE(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_vector,
                (int count, int blocklength, int stride, MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_create_hvector,
                (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_indexed,
                (int count, const int array_of_blocklengths[], const int array_of_displacements[],
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_create_hindexed,
                (int count, const int array_of_blocklengths[],
                 const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_create_indexed_block,
                (int count, int blocklength, const int array_of_displacements[],
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_create_hindexed_block,
                (int count, int blocklength, const MPI_Aint array_of_displacements[],
                 MPI_Datatype oldtype, MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_create_struct,
                (int count, const int array_of_blocklengths[],
                 const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                 MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_create_resized,
                (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_create_subarray,
                (int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                 const int array_of_starts[], int order, MPI_Datatype oldtype,
                 MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype))
RFT_MPI_DECLARE(int, Type_commit, (MPI_Datatype * datatype))
RFT_MPI_DECLARE(int, Type_free, (MPI_Datatype * datatype))
RFT_MPI_DECLARE(int, Type_set_name, (MPI_Datatype datatype, const char* type_name))
RFT_MPI_DECLARE(int, Type_get_name, (MPI_Datatype datatype, char* type_name, int* resultlen))
RFT_MPI_DECLARE(int, Get_address, (const void* location, MPI_Aint* address))
RFT_MPI_DECLARE(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
RFT_MPI_DECLARE(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
RFT_MPI_DECLARE(int, Pack,
                (const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
                 int* position, MPI_Comm comm))
RFT_MPI_DECLARE(int, Unpack,
                (const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                 MPI_Datatype datatype, MPI_Comm comm))
RFT_MPI_DECLARE(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size))

/* Topologies (over communicators) */
RFT_MPI_DECLARE(int, Dims_create, (int nnodes, int ndims, int dims[]))
RFT_MPI_DECLARE(int, Cart_create,
                (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                 MPI_Comm* comm_cart))
RFT_MPI_DECLARE(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
RFT_MPI_DECLARE(int, Cart_rank, (MPI_Comm comm, const int coords[], int* rank))
RFT_MPI_DECLARE(int, Cart_shift,
                (MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest))
RFT_MPI_DECLARE(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm))
RFT_MPI_DECLARE(int, Cart_get,
                (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
RFT_MPI_DECLARE(int, Cartdim_get, (MPI_Comm comm, int* ndims))
RFT_MPI_DECLARE(int, Topo_test, (MPI_Comm comm, int* status))

/* ULFM */
RFT_MPIX_DECLARE(int, Comm_revoke, (MPI_Comm comm))
RFT_MPIX_DECLARE(int, Comm_is_revoked, (MPI_Comm comm, int* flag))
RFT_MPIX_DECLARE(int, Comm_shrink, (MPI_Comm comm, MPI_Comm* newcomm))
RFT_MPIX_DECLARE(int, Comm_ishrink, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request))
RFT_MPIX_DECLARE(int, Comm_agree, (MPI_Comm comm, int* flag))
RFT_MPIX_DECLARE(int, Comm_iagree, (MPI_Comm comm, int* flag, MPI_Request* request))
RFT_MPIX_DECLARE(int, Comm_failure_ack, (MPI_Comm comm))
RFT_MPIX_DECLARE(int, Comm_failure_get_acked, (MPI_Comm comm, MPI_Group* failedgrp))
RFT_MPIX_DECLARE(int, Comm_get_failed, (MPI_Comm comm, MPI_Group* failedgrp))
RFT_MPIX_DECLARE(int, Comm_ack_failed, (MPI_Comm comm, int num_to_ack, int* num_acked))
