#include "traces/job_trace.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "io/input_error.hpp"
#include "io/input_file.hpp"

namespace capsim::traces {
namespace {

std::vector<JobRecord> read_text(const std::string& text,
                                 JobTraceFormat format = JobTraceFormat::kCapsimCsv) {
  JobTraceOptions options;
  options.format = format;
  options.path = "traces/jobs.csv";
  std::istringstream in(text);
  return read_job_trace(options, in);
}

std::string error_of(const std::string& text, JobTraceFormat format = JobTraceFormat::kCapsimCsv) {
  try {
    (void)read_text(text, format);
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CapsimCsvTest, ReadsRigidAndElasticJobsSortedBySubmit) {
  const auto jobs = read_text(
      "# comment\n"
      "job_id,submit,gpus,duration,min_gpus,max_gpus,priority\n"
      "b,2h,8,90min,,,\n"
      "a,90s,4,1h,2,16,3\n");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].id, "a");
  EXPECT_DOUBLE_EQ(jobs[0].submit_s, 90.0);
  EXPECT_EQ(jobs[0].gpus, 4);
  EXPECT_EQ(jobs[0].min_gpus, 2);
  EXPECT_EQ(jobs[0].max_gpus, 16);
  EXPECT_EQ(jobs[0].priority, 3);
  EXPECT_TRUE(jobs[0].is_elastic());
  EXPECT_DOUBLE_EQ(jobs[0].duration_s, 3600.0);
  EXPECT_EQ(jobs[1].id, "b");
  EXPECT_FALSE(jobs[1].is_elastic());
  EXPECT_DOUBLE_EQ(jobs[1].duration_s, 5400.0);
}

TEST(CapsimCsvTest, ScenarioJobsResolveAgainstTheTraceFolder) {
  const auto jobs = read_text("job_id,submit,gpus,scenario,tokens\nx,0s,64,../s/gpt.json,50B\n");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].scenario_path, "s/gpt.json");
  EXPECT_DOUBLE_EQ(jobs[0].tokens, 50e9);
  EXPECT_DOUBLE_EQ(jobs[0].duration_s, 0.0);
}

TEST(CapsimCsvTest, RejectsEachBadInputWithFileLineAndColumn) {
  EXPECT_EQ(error_of("job_id,submit\n"),
            "traces/jobs.csv: missing column \"gpus\" (header: job_id, submit)");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration,user\n"),
            "traces/jobs.csv: unknown column \"user\" (allowed: job_id, submit, gpus, duration, "
            "scenario, tokens, min_gpus, max_gpus, priority)");
  EXPECT_EQ(error_of("job_id,submit,gpus\n"),
            "traces/jobs.csv: the header needs either a \"duration\" column (rigid jobs) or "
            "\"scenario\" and \"tokens\" columns, not both");
  EXPECT_EQ(error_of("job_id,submit,gpus,scenario\n"),
            "traces/jobs.csv: columns \"scenario\" and \"tokens\" go together");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,0s,1,1h\na,1s,1,1h\n"),
            "traces/jobs.csv:line 3: column \"job_id\": duplicate job id \"a\"");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,90,1,1h\n"),
            "traces/jobs.csv:line 2: column \"submit\": expected a duration like \"90s\", got "
            "\"90\"");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,0s,0,1h\n"),
            "traces/jobs.csv:line 2: column \"gpus\": expected an integer in [1, 1048576], got "
            "\"0\"");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration,min_gpus\na,0s,4,1h,8\n"),
            "traces/jobs.csv:line 2: min_gpus <= gpus <= max_gpus does not hold: min_gpus 8, "
            "gpus 4, max_gpus 4");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,0s,4,0s\n"),
            "traces/jobs.csv:line 2: column \"duration\": expected a positive duration like "
            "\"2h\", got \"0s\"");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,0s,4\n"),
            "traces/jobs.csv:line 2: expected 4 fields like the header, got 3");
  EXPECT_EQ(error_of("job_id,submit,gpus,scenario,tokens\na,0s,8,s.json,lots\n"),
            "traces/jobs.csv:line 2: column \"tokens\": expected a positive count like \"50B\", "
            "got \"lots\"");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\n,0s,4,1h\n"),
            "traces/jobs.csv:line 2: column \"job_id\": empty job id");
  EXPECT_EQ(error_of("job_id,job_id\n"),
            "traces/jobs.csv:line 1: column \"job_id\" appears twice in the header");
  EXPECT_EQ(error_of(""), "traces/jobs.csv: the job trace has no header row");
}

TEST(ImportTest, PhillySampleFromPollux) {
  JobTraceOptions options;
  options.format = JobTraceFormat::kPhillyPollux;
  options.path = std::string(CAPSIM_DATA_DIR) + "/traces/philly_jobs_sample_pollux.csv";
  const auto jobs = read_job_trace(options);
  ASSERT_EQ(jobs.size(), 371u);
  EXPECT_DOUBLE_EQ(jobs.front().submit_s, 0.0);  // 2017-09-29 07:58:32, the earliest row
  EXPECT_DOUBLE_EQ(jobs.front().duration_s, 860662.0);
  for (std::size_t i = 1; i < jobs.size(); ++i)
    EXPECT_LE(jobs[i - 1].submit_s, jobs[i].submit_s);
  // 2017-10-09 07:01:55 is 10 days minus 56 min 37 s after the first row.
  EXPECT_DOUBLE_EQ(jobs.back().submit_s, 10 * 86400.0 - 3397.0);
}

TEST(ImportTest, AlibabaOpenbKeepsScheduledGpuPods) {
  JobTraceOptions options;
  options.format = JobTraceFormat::kAlibabaOpenb;
  options.path = std::string(CAPSIM_DATA_DIR) + "/traces/alibaba_openb_pod_list_default_sample.csv";
  const auto jobs = read_job_trace(options);
  EXPECT_EQ(jobs.size(), 200u);  // 226 rows - 9 CPU-only - 17 never scheduled
  EXPECT_EQ(jobs.front().id, "openb-pod-0000");
  EXPECT_DOUBLE_EQ(jobs.front().duration_s, 12537496.0);
}

TEST(ImportTest, PolluxWorkloadIsElastic) {
  JobTraceOptions options;
  options.format = JobTraceFormat::kPolluxWorkload;
  options.path = std::string(CAPSIM_DATA_DIR) + "/traces/pollux_workload1_philly_derived.csv";
  const auto jobs = read_job_trace(options);
  ASSERT_EQ(jobs.size(), 160u);
  EXPECT_EQ(jobs.front().id, "cifar10-0");
  EXPECT_EQ(jobs.front().gpus, 16);
  EXPECT_EQ(jobs.front().min_gpus, 1);
  EXPECT_EQ(jobs.front().max_gpus, 32);
  EXPECT_DOUBLE_EQ(jobs.front().duration_s, 0.5 * 3600 / 16);  // 0.5 GPU-h at 16 GPUs
}

TEST(ImportTest, HeliosClusterLog) {
  const std::string log =
      "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,"
      "queue\n"
      "j1,u,vc1,16,8,2,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:01:00,2020-04-01 01:01:00,"
      "3600,50\n"
      "j2,u,vc1,0,8,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:00,2020-04-01 00:10:00,"
      "600,0\n"
      "j3,u,vc1,12,8,2,NODE_FAIL,2020-04-01 00:00:00,2020-04-01 00:00:05,2020-04-01 00:30:05,"
      ",5\n"
      "j4,u,vc1,1,8,1,CANCELLED,2020-04-01 00:00:20,,,0,\n";
  const auto jobs = read_text(log, JobTraceFormat::kHelios);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].id, "j3");
  EXPECT_EQ(jobs[0].gpus, 16);  // 12 GPUs on two 8-GPU nodes hold both nodes
  EXPECT_DOUBLE_EQ(jobs[0].duration_s, 1800.0);
  EXPECT_EQ(jobs[1].id, "j1");
  EXPECT_DOUBLE_EQ(jobs[1].submit_s, 10.0);
  EXPECT_EQ(
      error_of("job_id,gpu_num,submit_time,duration\nx,1,yesterday,5\n", JobTraceFormat::kHelios),
      "traces/jobs.csv:line 2: column \"submit_time\": expected a time like "
      "\"2017-10-09 07:01:55\" or seconds, got \"yesterday\"");
}

TEST(ImportTest, RejectsImpossibleTimes) {
  // A date that does not exist (Feb 30; Feb 29 outside a leap year).
  EXPECT_EQ(error_of("timestamp,duration,num_gpus\n2017-02-30 07:01:55,60,8\n",
                     JobTraceFormat::kPhillyPollux),
            "traces/jobs.csv:line 2: column \"timestamp\": expected a time like "
            "\"2017-10-09 07:01:55\" or seconds, got \"2017-02-30 07:01:55\"");
  EXPECT_NE(error_of("timestamp,duration,num_gpus\n2017-02-29 00:00:00,60,8\n",
                     JobTraceFormat::kPhillyPollux),
            "no error");
  EXPECT_EQ(error_of("timestamp,duration,num_gpus\n2016-02-29 00:00:00,60,8\n",
                     JobTraceFormat::kPhillyPollux),
            "no error");
  // A Helios job that ends before it starts is an error, not a job that never ran.
  EXPECT_EQ(error_of("job_id,gpu_num,submit_time,start_time,end_time\n"
                     "a,8,2020-04-01 00:00:00,2020-04-01 00:10:00,2020-04-01 00:05:00\n",
                     JobTraceFormat::kHelios),
            "traces/jobs.csv:line 2: end_time is before start_time");
  // Date-times mixed with plain seconds put jobs decades apart.
  EXPECT_EQ(
      error_of("timestamp,duration,num_gpus\n2017-10-09 07:01:55,60,8\n0,60,8\n",
               JobTraceFormat::kPhillyPollux),
      "traces/jobs.csv:line 2: job \"philly-2\" is submitted 17448 days after the trace starts; a "
      "trace may span at most 3650 days (does it mix date-times with plain seconds?)");
  // The span holds for the trace as replayed: a day stretched a million times is 2,700 years
  // (replaying it would exhaust memory).
  JobTraceOptions stretched;
  stretched.path = "traces/jobs.csv";
  stretched.time_scale = 1e6;
  std::istringstream day("job_id,submit,gpus,duration\na,0s,8,1h\nb,1d,8,1h\n");
  try {
    (void)read_job_trace(stretched, day);
    ADD_FAILURE() << "accepted a trace stretched to 2,700 years";
  } catch (const io::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "traces/jobs.csv:line 3: job \"b\" is submitted 1000000 days after the trace "
              "starts; a trace may span at most 3650 days once time_scale is applied");
  }
  // A submit time too large to simulate: past the ceiling of every duration.
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,1e300s,8,1h\n"),
            "traces/jobs.csv:line 2: column \"submit\": expected a duration of at most \"1e12s\", "
            "got \"1e300s\"");
  // The same in an imported format, whose offsets count from the first job.
  EXPECT_EQ(error_of("name,time,application,num_replicas\na,0,bert,1\nb,1e80,bert,1\n",
                     JobTraceFormat::kPolluxWorkload),
            "traces/jobs.csv:line 3: job \"b\" is submitted 1.16e+75 days after the trace starts; "
            "a trace may span at most 3650 days (does it mix date-times with plain seconds?)");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,1e308days,8,1h\n"),
            "traces/jobs.csv:line 2: column \"submit\": expected a duration like \"90s\", got "
            "\"1e308days\"");
}

// Durations and submit times have the ceiling of every duration (1e12 s): a 1e308s submit time
// overflowed into a negative day count in the span message.
TEST(ImportTest, HugeTimesAreBadInputWithTheirOwnNumbers) {
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,1e308s,8,1h\n"),
            "traces/jobs.csv:line 2: column \"submit\": expected a duration of at most "
            "\"1e12s\", got \"1e308s\"");
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\na,0s,8,1e300s\n"),
            "traces/jobs.csv:line 2: column \"duration\": expected a duration of at most "
            "\"1e12s\", got \"1e300s\"");
  EXPECT_EQ(error_of("job_id,submit,gpus,scenario,tokens\na,0s,8,s.json,1e30\n"),
            "traces/jobs.csv:line 2: column \"tokens\": expected a count of at most \"1e18\", "
            "got \"1e30\"");
  EXPECT_EQ(error_of("timestamp,duration,num_gpus\n0,1e300,8\n", JobTraceFormat::kPhillyPollux),
            "traces/jobs.csv:line 2: job \"philly-2\" runs for 1e+300 s; a duration may be at "
            "most 1e12 s (about 31,700 years)");
  EXPECT_EQ(error_of("job_id,gpu_num,submit_time,duration\na,8,0,5\nb,8,1e300,5\n",
                     JobTraceFormat::kHelios),
            "traces/jobs.csv:line 3: job \"b\" is submitted 1.16e+295 days after the trace "
            "starts; a trace may span at most 3650 days (does it mix date-times with plain "
            "seconds?)");
  EXPECT_EQ(error_of("job_id,gpu_num,submit_time,duration\na,8,-1e308,5\nb,8,1e308,5\n",
                     JobTraceFormat::kHelios),
            "traces/jobs.csv:line 3: job \"b\" is submitted inf days after the trace starts; a "
            "trace may span at most 3650 days (does it mix date-times with plain seconds?)");
}

// Job ids are echoed into JSON output, which must be UTF-8; a NUL is not text.
TEST(ImportTest, TracesAreUtf8TextWithoutNul) {
  EXPECT_EQ(error_of("job_id,submit,gpus,duration\n\xFF,0s,8,1h\n"),
            "traces/jobs.csv:line 2: invalid UTF-8 (byte 0xFF) at column 1; the job trace is "
            "UTF-8 text without NUL bytes");
  EXPECT_EQ(error_of(std::string("job_id,submit,gpus,duration\na,0s,8,1h\0\n", 39)),
            "traces/jobs.csv:line 2: a NUL byte at column 10; the job trace is UTF-8 text "
            "without NUL bytes");
}

// A trace of a million jobs is larger than a JSON input may be, and still read.
TEST(ImportTest, AMillionJobTraceIsRead) {
  const std::string path = ::testing::TempDir() + "capsim_million_jobs.csv";
  {
    std::ofstream out(path, std::ios::binary);
    out << "job_id,submit,gpus,duration\n";
    const std::string pad(50, 'x');
    for (int i = 0; i < 1000000; ++i)
      out << "job-" << i << "-" << pad << "," << i % 86400 << "s,8,1h\n";
  }
  ASSERT_GT(std::filesystem::file_size(path), io::kMaxJsonInputBytes);
  JobTraceOptions options;
  options.path = path;
  EXPECT_EQ(read_job_trace(options).size(), 1000000u);
  std::filesystem::remove(path);
}

TEST(ImportTest, ImportedJobIdsArePresentAndUnique) {
  EXPECT_EQ(error_of("job_id,gpu_num,submit_time,duration\na,8,0,600\na,8,0,600\n",
                     JobTraceFormat::kHelios),
            "traces/jobs.csv:line 3: column \"job_id\": duplicate job id \"a\"");
  EXPECT_EQ(error_of("job_id,gpu_num,submit_time,duration\n,8,0,600\n", JobTraceFormat::kHelios),
            "traces/jobs.csv:line 2: column \"job_id\": empty job id");
  EXPECT_EQ(error_of("name,time,application,num_replicas\nj,0,bert,1\nj,5,bert,1\n",
                     JobTraceFormat::kPolluxWorkload),
            "traces/jobs.csv:line 3: column \"name\": duplicate job id \"j\"");
  EXPECT_EQ(error_of("name,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n"
                     "p,1,1000,0,100,10\np,1,1000,0,100,10\n",
                     JobTraceFormat::kAlibabaOpenb),
            "traces/jobs.csv:line 3: column \"name\": duplicate job id \"p\"");
}

TEST(ImportTest, LimitTimeScaleAndDurationClip) {
  JobTraceOptions options;
  options.path = "jobs.csv";
  options.limit = 2;
  options.time_scale = 0.5;
  options.max_duration_s = 1800;
  std::istringstream in("job_id,submit,gpus,duration\na,10s,1,1h\nb,20s,1,10min\nc,30s,1,1h\n");
  const auto jobs = read_job_trace(options, in);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(jobs[1].submit_s, 10.0);
  EXPECT_DOUBLE_EQ(jobs[0].duration_s, 1800.0);
  EXPECT_DOUBLE_EQ(jobs[1].duration_s, 600.0);
}

}  // namespace
}  // namespace capsim::traces
