// A doubly linked list of nodes that live inside the objects they link (requests, message
// records), so linking and unlinking never allocate. The list does not own its nodes.
#ifndef RFT_TRANSPORT_MATCHING_INTRUSIVE_LIST_H_
#define RFT_TRANSPORT_MATCHING_INTRUSIVE_LIST_H_

#include <cstddef>

namespace rft::transport {

struct ListNode {
  ListNode* prev = nullptr;
  ListNode* next = nullptr;
  bool linked() const { return next != nullptr; }
};

// T derives from ListNode.
template <class T>
class IntrusiveList {
 public:
  IntrusiveList() { head_.prev = head_.next = &head_; }
  IntrusiveList(const IntrusiveList&) = delete;
  IntrusiveList& operator=(const IntrusiveList&) = delete;

  bool empty() const { return head_.next == &head_; }
  size_t size() const { return size_; }

  void push_back(T* item) {
    ListNode* node = item;
    node->prev = head_.prev;
    node->next = &head_;
    head_.prev->next = node;
    head_.prev = node;
    ++size_;
  }

  // `item` must be in this list.
  void erase(T* item) {
    ListNode* node = item;
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->prev = node->next = nullptr;
    --size_;
  }

  T* front() const { return empty() ? nullptr : static_cast<T*>(head_.next); }
  // The item after `item`, or nullptr at the end.
  T* next(const T* item) const {
    const ListNode* node = item;
    return node->next == &head_ ? nullptr : static_cast<T*>(node->next);
  }

 private:
  ListNode head_;
  size_t size_ = 0;
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_MATCHING_INTRUSIVE_LIST_H_
