#include "core/op_store.h"

namespace tfdiag {

namespace {

void PutVarint(std::vector<uint8_t>* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<uint8_t>(v));
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// a + b and a - b modulo 2^64: the gaps between ops are stored as such differences, so a store
// of any int64 times (an input's, however far apart) decodes to the same times without signed
// overflow (undefined behaviour, found by UBSan). Readers bound times; this does not rely on it.
TimeNs WrapAdd(TimeNs a, TimeNs b) {
  return static_cast<TimeNs>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
TimeNs WrapSub(TimeNs a, TimeNs b) {
  return static_cast<TimeNs>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
TimeNs WrapMul(TimeNs a, TimeNs b) {
  return static_cast<TimeNs>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Reads a varint written by PutVarint (the bytes are our own: no bounds to check).
inline uint64_t GetVarint(const uint8_t*& p) {
  uint64_t v = *p & 0x7f;
  if (*p++ < 0x80) return v;
  for (int shift = 7;; shift += 7) {
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
}

}  // namespace

void PackedOps::Append(const OpRow* rows, size_t n) {
  for (size_t first = 0; first < n; first += kPackBlock) {
    const size_t m = std::min<size_t>(kPackBlock, n - first);
    const OpRow* r = rows + first;
    BlockHead head;
    head.start = r[0].start;
    // In microseconds when every gap and duration is a whole number of them (and every gap and
    // end fits in int64, so that dividing the stored difference by 1000 is exact).
    bool micros = true;
    TimeNs end = head.start;
    for (size_t k = 0; k < m && micros; ++k) {
      TimeNs gap = 0;
      micros = !__builtin_sub_overflow(r[k].start, end, &gap) && gap % 1000 == 0 &&
               r[k].dur() % 1000 == 0 && !__builtin_add_overflow(r[k].start, r[k].dur(), &end);
    }
    head.where = bytes.size() | (micros ? BlockHead::kMicros : 0);
    blocks.push_back(head);
    const uint64_t scale = micros ? 1000 : 1;
    TimeNs prev_end = head.start;
    uint16_t lane = 0;
    for (size_t k = 0; k < m; ++k) {
      // From the previous op's end, not its start: ops of one thread follow each other, so the
      // gap is smaller than the previous op (negative when they nest or overlap).
      if (k > 0) {
        PutVarint(&bytes, ZigZag(WrapSub(r[k].start, prev_end) / static_cast<TimeNs>(scale)));
      }
      prev_end = WrapAdd(r[k].start, r[k].dur());
      PutVarint(&bytes, static_cast<uint64_t>(r[k].dur()) / scale);
      const bool new_lane = r[k].lane != lane;
      PutVarint(&bytes, (uint64_t{r[k].node} << 1) | (new_lane ? 1 : 0));
      if (new_lane) PutVarint(&bytes, r[k].lane);
      lane = r[k].lane;
    }
  }
  count += static_cast<uint32_t>(n);
}

void PackedOps::Decode(uint32_t first, uint32_t n, uint16_t device,
                       const std::vector<uint32_t>& node_map, OpRow* out) const {
  const uint32_t last = first + n;
  while (first < last) {
    const uint32_t b = first / kPackBlock;
    const BlockHead& head = blocks[b];
    const uint32_t block_first = b * kPackBlock;
    const uint32_t block_end = std::min(count, block_first + kPackBlock);
    const uint8_t* p = bytes.data() + head.offset();
    TimeNs start = head.start, end = head.start;
    uint16_t lane = 0;
    const TimeNs scale = head.scale();
    for (uint32_t i = block_first; i < block_end && i < last; ++i) {
      if (i > block_first) start = WrapAdd(end, WrapMul(UnZigZag(GetVarint(p)), scale));
      const TimeNs dur = static_cast<TimeNs>(GetVarint(p)) * scale;
      end = WrapAdd(start, dur);
      const uint64_t nl = GetVarint(p);
      if (nl & 1) lane = static_cast<uint16_t>(GetVarint(p));
      if (i < first) continue;
      OpRow& op = *out++;
      op.start = start;
      op.set_dur(dur);
      const uint32_t node = static_cast<uint32_t>(nl >> 1);
      op.node = node_map.empty() || nodes_mapped ? node : node_map[node];
      op.device = device;
      op.lane = lane;
    }
    first = std::min(last, block_end);
  }
}

void OpStore::SetPacked(std::vector<PackedOps> devices, std::vector<uint32_t> node_map) {
  plain_ = Plain();
  packed_ = true;
  devices_ = std::move(devices);
  node_map_ = std::move(node_map);
  device_begin_.assign(devices_.size() + 1, 0);
  for (size_t d = 0; d < devices_.size(); ++d) {
    device_begin_[d + 1] = device_begin_[d] + devices_[d].count;
  }
  packed_size_ = device_begin_.back();
}

void OpStore::Unpack() {
  if (!packed_) return;
  Plain rows(packed_size_);
  for (size_t d = 0; d < devices_.size(); ++d) {
    devices_[d].Decode(0, devices_[d].count, static_cast<uint16_t>(d), node_map_,
                       rows.data() + device_begin_[d]);
    devices_[d] = PackedOps();
  }
  *this = OpStore();
  plain_ = std::move(rows);
}

size_t OpStore::MemoryBytes() const {
  size_t n = plain_.capacity() * sizeof(OpRow);
  for (const PackedOps& d : devices_) n += d.MemoryBytes();
  return n + device_begin_.capacity() * sizeof(size_t) + node_map_.capacity() * sizeof(uint32_t);
}

uint32_t OpStore::DeviceOf(size_t i) const {
  // The last device that begins at or before i and holds rows.
  auto it = std::upper_bound(device_begin_.begin(), device_begin_.end(), i);
  return static_cast<uint32_t>(it - device_begin_.begin() - 1);
}

OpRow OpStore::PackedAt(size_t i) const {
  const uint32_t d = DeviceOf(i);
  OpRow op;
  devices_[d].Decode(static_cast<uint32_t>(i - device_begin_[d]), 1, static_cast<uint16_t>(d),
                     node_map_, &op);
  return op;
}

size_t OpStore::DecodeSome(size_t begin, size_t end, OpRow* out) const {
  const uint32_t d = DeviceOf(begin);
  const uint32_t local = static_cast<uint32_t>(begin - device_begin_[d]);
  const uint32_t block_end = (local / kPackBlock + 1) * kPackBlock;
  const size_t stop = std::min({end, device_begin_[d] + block_end, device_begin_[d + 1]});
  const uint32_t n = static_cast<uint32_t>(stop - begin);
  devices_[d].Decode(local, n, static_cast<uint16_t>(d), node_map_, out);
  return n;
}

}  // namespace tfdiag
