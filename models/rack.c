/* placeholder */ typedef int placeholder_;
