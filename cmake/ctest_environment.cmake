# Read by ctest before it runs this project's tests (TEST_INCLUDE_FILES): the
# environment every test inherits. Open MPI's mpirun refuses to start as root
# (a container's shell, a CI runner) unless both variables are set; they change
# nothing for other users or other MPIs. fftune sets them for the jobs it
# launches itself; the tests start mpirun directly, from scripts and from Slurm.
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
