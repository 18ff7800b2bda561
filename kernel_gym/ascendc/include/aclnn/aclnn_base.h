// aclnn/aclnn_base.h: what a generated aclnn_<op>.h includes (the argument objects and aclnnStatus).
#pragma once
#include "aclnn/acl_meta.h"
