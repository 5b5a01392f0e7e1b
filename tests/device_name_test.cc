// ParseDeviceName, DeviceName::Canonical and TaskLabel on the spellings TensorFlow writes into
// timelines' process_name metadata (full, legacy, GPU tracer sub-devices, TF2 host planes).
#include "core/device_name.h"

#include <gtest/gtest.h>

#include <string>

namespace tfdiag {
namespace {

DeviceName ParseOk(const std::string& text) {
  StatusOr<DeviceName> d = ParseDeviceName(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status().message();
  return d.ok() ? *d : DeviceName{};
}

TEST(ParseDeviceName, FullNameWithComputeSuffix) {
  DeviceName d = ParseOk("/job:ps/replica:0/task:1/device:CPU:0 Compute");
  EXPECT_EQ(d.job, "ps");
  EXPECT_EQ(d.replica, 0);
  EXPECT_EQ(d.task, 1);
  EXPECT_EQ(d.type, "CPU");
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.sub, "");
  EXPECT_EQ(d.lane_kind, "Compute");
  EXPECT_EQ(d.Canonical(), "/job:ps/replica:0/task:1/device:CPU:0");
}

TEST(ParseDeviceName, LegacyLowerCaseDeviceWithTensorsSuffix) {
  DeviceName d = ParseOk("/job:localhost/replica:0/task:0/cpu:0 Tensors");
  EXPECT_EQ(d.job, "localhost");
  EXPECT_EQ(d.task, 0);
  EXPECT_EQ(d.type, "CPU") << "the device type is upper-cased";
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.sub, "");
  EXPECT_EQ(d.lane_kind, "Tensors");
}

TEST(ParseDeviceName, LegacyGpuStreamWithoutJob) {
  DeviceName d = ParseOk("/gpu:0/stream:12");
  EXPECT_EQ(d.job, "");
  EXPECT_EQ(d.type, "GPU");
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.sub, "stream:12");
  EXPECT_EQ(d.lane_kind, "");
  EXPECT_EQ(d.Canonical(), "/device:GPU:0/stream:12");
}

TEST(ParseDeviceName, ModernGpuMemcpyWithoutJob) {
  DeviceName d = ParseOk("/device:GPU:0/memcpy");
  EXPECT_EQ(d.job, "");
  EXPECT_EQ(d.type, "GPU");
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.sub, "memcpy");
  EXPECT_EQ(d.Canonical(), "/device:GPU:0/memcpy");
}

TEST(ParseDeviceName, WorkerGpuStreamAllCompute) {
  DeviceName d = ParseOk("/job:worker/replica:0/task:3/device:GPU:0/stream:all Compute");
  EXPECT_EQ(d.job, "worker");
  EXPECT_EQ(d.task, 3);
  EXPECT_EQ(d.type, "GPU");
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.sub, "stream:all");
  EXPECT_EQ(d.lane_kind, "Compute");
  EXPECT_EQ(d.Canonical(), "/job:worker/replica:0/task:3/device:GPU:0/stream:all");
}

TEST(ParseDeviceName, DeviceOrdinalAndReplicaAreRead) {
  DeviceName d = ParseOk("/job:worker/replica:2/task:7/device:GPU:3");
  EXPECT_EQ(d.replica, 2);
  EXPECT_EQ(d.task, 7);
  EXPECT_EQ(d.index, 3);
  EXPECT_EQ(d.Canonical(), "/job:worker/replica:2/task:7/device:GPU:3");
}

TEST(ParseDeviceName, Tf2HostPlane) {
  DeviceName d = ParseOk("/host:CPU");
  EXPECT_EQ(d.job, "");
  EXPECT_EQ(d.type, "CPU");
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.sub, "");
  EXPECT_EQ(d.Canonical(), "/device:CPU:0");
}

TEST(ParseDeviceName, JobWithoutDeviceIsTheTaskHost) {
  DeviceName d = ParseOk("/job:ps/replica:0/task:2");
  EXPECT_EQ(d.job, "ps");
  EXPECT_EQ(d.task, 2);
  EXPECT_EQ(d.type, "CPU");
}

TEST(ParseDeviceName, NonDeviceProcessNamesAreInvalidInput) {
  for (const char* text : {"Allocators", "", "python3", "/", "/foo:bar"}) {
    StatusOr<DeviceName> d = ParseDeviceName(text);
    EXPECT_FALSE(d.ok()) << "'" << text << "' must not parse";
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), StatusCode::kInvalidInput) << text;
      EXPECT_FALSE(d.status().message().empty()) << text;
    }
  }
}

TEST(ParseDeviceName, ErrorMessageNamesTheInput) {
  StatusOr<DeviceName> d = ParseDeviceName("Allocators");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("Allocators"), std::string::npos) << d.status().message();
}

TEST(ParseDeviceName, NonNumericTaskIsInvalidInputNamingTheComponent) {
  StatusOr<DeviceName> d = ParseDeviceName("/job:ps/task:x");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(d.status().message().find("task"), std::string::npos) << d.status().message();
  EXPECT_NE(d.status().message().find("'x'"), std::string::npos) << d.status().message();
}

TEST(ParseDeviceName, BadReplicaAndBadDeviceOrdinalAreInvalidInput) {
  for (const char* text : {"/job:ps/replica:a/task:0/device:CPU:0",
                           "/job:ps/replica:0/task:0/device:CPU:z", "/job:ps/task:1x"}) {
    StatusOr<DeviceName> d = ParseDeviceName(text);
    EXPECT_FALSE(d.ok()) << text;
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), StatusCode::kInvalidInput) << text;
    }
  }
}

TEST(DeviceNameCanonical, LegacyAndModernSpellingsMerge) {
  const std::string legacy = ParseOk("/job:localhost/replica:0/task:0/cpu:0 Compute").Canonical();
  const std::string modern = ParseOk("/job:localhost/replica:0/task:0/device:CPU:0").Canonical();
  EXPECT_EQ(legacy, modern);
  EXPECT_EQ(ParseOk("/gpu:0/stream:12").Canonical(),
            ParseOk("/device:GPU:0/stream:12 Compute").Canonical());
  EXPECT_EQ(ParseOk("/job:worker/replica:0/task:1/gpu:1").Canonical(),
            ParseOk("/job:worker/replica:0/task:1/device:gpu:1 Tensors").Canonical());
}

TEST(DeviceNameCanonical, DistinctDevicesStayDistinct) {
  const std::string base = ParseOk("/job:worker/replica:0/task:0/device:GPU:0").Canonical();
  for (const char* other :
       {"/job:worker/replica:0/task:1/device:GPU:0", "/job:worker/replica:1/task:0/device:GPU:0",
        "/job:ps/replica:0/task:0/device:GPU:0", "/job:worker/replica:0/task:0/device:GPU:1",
        "/job:worker/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:0/device:GPU:0/stream:1",
        "/job:worker/replica:0/task:0/device:GPU:0/memcpy"}) {
    EXPECT_NE(ParseOk(other).Canonical(), base) << other;
  }
  EXPECT_NE(ParseOk("/gpu:0/stream:1").Canonical(), ParseOk("/gpu:0/stream:2").Canonical());
}

TEST(DeviceNameCanonical, CanonicalRoundTrips) {
  for (const char* text : {"/job:ps/replica:0/task:1/device:CPU:0 Compute", "/gpu:0/stream:12",
                           "/job:worker/replica:3/task:2/device:GPU:1/memcpy", "/host:CPU"}) {
    const std::string once = ParseOk(text).Canonical();
    EXPECT_EQ(ParseOk(once).Canonical(), once) << text;
  }
}

TEST(TaskLabel, JobColonTaskAndReplicaSuffixWhenNonZero) {
  EXPECT_EQ(TaskLabel("ps", 0, 1), "ps:1");
  EXPECT_EQ(TaskLabel("worker", 0, 0), "worker:0");
  EXPECT_EQ(TaskLabel("ps", 2, 1), "ps:1@r2");
  EXPECT_NE(TaskLabel("ps", 0, 1), TaskLabel("ps", 1, 1));
}

TEST(JobKind, KindsFromJobNames) {
  EXPECT_EQ(JobKindOf("ps"), JobKind::kPs);
  EXPECT_EQ(JobKindOf("worker"), JobKind::kWorker);
  EXPECT_EQ(JobKindOf("chief"), JobKind::kChief);
  EXPECT_EQ(JobKindOf("localhost"), JobKind::kLocal);
  EXPECT_EQ(JobKindOf(""), JobKind::kLocal);
  EXPECT_EQ(JobKindOf("trainer"), JobKind::kOther);
  EXPECT_EQ(JobKindName(JobKind::kPs), "ps");
  EXPECT_EQ(JobKindName(JobKind::kWorker), "worker");
}

}  // namespace
}  // namespace tfdiag
