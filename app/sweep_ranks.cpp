// Tasks of a sweep over threads, and over MPI ranks when built with MPI (docs/cluster.md).
// Under MPI, rank 0 is the master: one of its threads hands out task numbers one at a time
// on request and receives the results, its other threads compute tasks like every other
// rank's threads. Results travel as exact bytes (serialize_trajectory), so what rank 0
// writes does not depend on which rank computed what.
#include "sweep_ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "headspec/errors.hpp"
#include "headspec/sweep.hpp"
#include "headspec/sweep_plan.hpp"

#ifdef HEADSPEC_HAVE_MPI
#include <mpi.h>
#include <omp.h>
#endif

namespace headspec::app {
namespace {

// The number of processes an MPI launcher announced (0 when none did), and whether one did.
int launcher_size(bool* launched) {
  *launched = false;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name)) *launched = true;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

#ifdef HEADSPEC_HAVE_MPI
// Message tags: a worker thread asks for its first task, rank 0 answers with a task number
// (-1: no more); a worker's result (task number, then the trajectory's bytes) is also its
// request for the next task, so a task costs one round trip; a failure ends the thread,
// and each worker rank says once that all its threads have stopped.
enum Tag : int { kRequest = 1, kTask = 2, kResult = 3, kFailure = 4, kFinished = 5 };

void run_master(int size, const std::vector<int>& todo, const SweepRanks::RunTask& run,
                const SweepRanks::TaskDone& done) {
  FirstTaskError error;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> received{0};
  // After a failure no further task is handed out; the ranks still stop in order.
  auto take = [&]() -> int {
    if (error.failed()) return -1;
    const std::size_t i = next++;
    return i < todo.size() ? todo[i] : -1;
  };
  auto deliver = [&](int task, Trajectory&& tr, int by) {
    try {
      done(task, std::move(tr), by);
      ++received;
    } catch (const std::exception& e) {
      error.set(e.what());
    }
  };
  const int threads = std::max(1, omp_get_max_threads());
#pragma omp parallel num_threads(threads + 1)
  {
    if (omp_get_thread_num() == 0) {
      // The master thread (the only one of rank 0 that calls MPI): answers until every
      // worker rank has finished. It polls, sleeping 50 µs after a message and up to 1 ms
      // when idle, so as not to spin on a core the tasks need (runs last far longer).
      int finished = 0;
      std::vector<char> buffer;
      auto pause = std::chrono::microseconds(50);
      while (finished < size - 1) {
        int flag = 0;
        MPI_Status status;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
        if (!flag) {
          std::this_thread::sleep_for(pause);
          pause = std::min(2 * pause, std::chrono::microseconds(1000));
          continue;
        }
        pause = std::chrono::microseconds(50);
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        buffer.resize(static_cast<std::size_t>(std::max(count, 1)));
        MPI_Recv(buffer.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (status.MPI_TAG == kRequest) {
          const int task = take();
          MPI_Send(&task, 1, MPI_INT, status.MPI_SOURCE, kTask, MPI_COMM_WORLD);
        } else if (status.MPI_TAG == kResult) {
          // The next task goes out first: the worker computes while this result is stored.
          const int next_task = take();
          MPI_Send(&next_task, 1, MPI_INT, status.MPI_SOURCE, kTask, MPI_COMM_WORLD);
          int task = -1;
          try {
            if (count < static_cast<int>(sizeof(int))) throw std::runtime_error("short result message");
            std::memcpy(&task, buffer.data(), sizeof(int));
            deliver(task,
                    deserialize_trajectory(std::string_view(buffer.data() + sizeof(int), count - sizeof(int))),
                    status.MPI_SOURCE);
          } catch (const std::exception& e) {
            error.set(fmt::format("result of task {} from rank {}: {}", task, status.MPI_SOURCE, e.what()));
          }
        } else if (status.MPI_TAG == kFailure) {
          error.set(fmt::format("rank {}: {}", status.MPI_SOURCE, std::string(buffer.data(), count)));
        } else if (status.MPI_TAG == kFinished) {
          ++finished;
        }
      }
    } else {
      for (int task = take(); task >= 0; task = take()) {
        try {
          deliver(task, run(task), 0);
        } catch (const std::exception& e) {
          error.set(e.what());
        }
      }
    }
  }
  error.throw_if_set();
  if (received != todo.size())
    throw std::runtime_error(fmt::format("sweep: {} of {} runs came back", received.load(), todo.size()));
}

void run_worker(int thread_level, const SweepRanks::RunTask& run) {
  // MPI calls of the threads are serialised (MPI_THREAD_SERIALIZED); a library that
  // offers less gets one thread per rank.
  const int threads = thread_level >= MPI_THREAD_SERIALIZED ? std::max(1, omp_get_max_threads()) : 1;
#pragma omp parallel num_threads(threads)
  {
    int task = -1;
#pragma omp critical(headspec_mpi)
    {
      const int ask = 0;
      MPI_Send(&ask, 1, MPI_INT, 0, kRequest, MPI_COMM_WORLD);
      MPI_Recv(&task, 1, MPI_INT, 0, kTask, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    while (task >= 0) {
      std::string message(sizeof(int), '\0');
      int tag = kResult;
      try {
        std::memcpy(message.data(), &task, sizeof(int));
        message += serialize_trajectory(run(task));
        if (message.size() > static_cast<std::size_t>(INT_MAX))
          throw std::runtime_error(fmt::format("the result of task {} exceeds 2 GB", task));
      } catch (const std::exception& e) {
        message = e.what();
        tag = kFailure;
      }
#pragma omp critical(headspec_mpi)
      {
        MPI_Send(message.data(), static_cast<int>(message.size()), MPI_BYTE, 0, tag, MPI_COMM_WORLD);
        if (tag == kResult) MPI_Recv(&task, 1, MPI_INT, 0, kTask, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (tag == kFailure) break;
    }
  }
  const int finished = 0;
  MPI_Send(&finished, 1, MPI_INT, 0, kFinished, MPI_COMM_WORLD);
}
#endif

}  // namespace

SweepRanks::SweepRanks() {
  bool launched = false;
  const int announced = launcher_size(&launched);
#ifdef HEADSPEC_HAVE_MPI
  if (!launched) return;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &thread_level_);
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  (void)announced;
#else
  if (launched && announced > 1)
    throw UsageError(fmt::format("sweep: started as {} MPI processes, but this headspec is built without MPI "
                                 "(install libopenmpi-dev and rebuild; docs/cluster.md)",
                                 announced));
#endif
}

SweepRanks::~SweepRanks() {
#ifdef HEADSPEC_HAVE_MPI
  if (mpi_) MPI_Finalize();
#endif
}

int SweepRanks::first_failure(bool failed) const {
  int first = failed ? rank_ : size_;
#ifdef HEADSPEC_HAVE_MPI
  if (mpi_) MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#endif
  return first;
}

int SweepRanks::broadcast(int value) const {
#ifdef HEADSPEC_HAVE_MPI
  if (mpi_) MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
  return value;
}

void SweepRanks::barrier() const {
#ifdef HEADSPEC_HAVE_MPI
  if (mpi_) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void SweepRanks::run_tasks(const std::vector<int>& todo, const RunTask& run, const TaskDone& done) const {
#ifdef HEADSPEC_HAVE_MPI
  if (mpi_ && size_ > 1) {
    if (rank_ == 0)
      run_master(size_, todo, run, done);
    else
      run_worker(thread_level_, run);
    return;
  }
#endif
  (void)thread_level_;
  run_tasks_locally(todo, run, done);
}

}  // namespace headspec::app
