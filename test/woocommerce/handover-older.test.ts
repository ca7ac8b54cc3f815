import { handOverOverHttp } from './handover';

handOverOverHttp('older', 'posts');
